{{/*
toolkit.image: an image reference from a dict with repository, tag and the
caller's global values; global.imageRegistry prefixes it when set.
  {{ include "toolkit.image" (dict "repository" "shop" "tag" "1.0" "global" .Values.global) }}
*/}}
{{- define "toolkit.image" -}}
{{- $registry := "" -}}
{{- if .global -}}
{{- $registry = .global.imageRegistry | default "" -}}
{{- end -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" $registry .repository (toString .tag) -}}
{{- else -}}
{{- printf "%s:%s" .repository (toString .tag) -}}
{{- end -}}
{{- end -}}
