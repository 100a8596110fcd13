{{/*
toolkit.labels: the recommended labels, with the chart and its version.
*/}}
{{- define "toolkit.labels" -}}
app.kubernetes.io/name: {{ include "toolkit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
toolkit.selectorLabels: the labels that never change, for selectors.
*/}}
{{- define "toolkit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolkit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
