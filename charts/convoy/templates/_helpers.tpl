{{/* The image of the convoy processes: repository@digest, else repository:tag. */}}
{{- define "convoy.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The etcd client URLs of convoy apiserver, comma-separated. */}}
{{- define "convoy.etcdServers" -}}
{{- if .Values.etcd.enabled -}}
http://convoy-etcd-0.convoy-etcd.{{ .Release.Namespace }}.svc:2379
{{- else -}}
{{- if not .Values.etcd.servers }}{{ fail "etcd.servers: set your etcd's client URLs when etcd.enabled is false" }}{{ end -}}
{{ join "," .Values.etcd.servers }}
{{- end -}}
{{- end -}}

{{/* The shards to run one controller and observer Deployment for; [""] is one for every Release. */}}
{{- define "convoy.shards" -}}
{{- if .Values.shards }}{{ toJson .Values.shards }}{{ else }}[""]{{ end -}}
{{- end -}}

{{/* The lockdown's ServiceAccount of the observer: its own value, else the controller's. */}}
{{- define "convoy.observerDefaultServiceAccount" -}}
{{- .Values.observer.defaultServiceAccount | default .Values.controller.defaultServiceAccount -}}
{{- end }}
