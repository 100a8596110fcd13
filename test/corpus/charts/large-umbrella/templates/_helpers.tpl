{{- define "lu.fullname" -}}{{ .Release.Name }}-operator{{- end }}
{{- define "lu.labels" -}}
app.kubernetes.io/name: operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
