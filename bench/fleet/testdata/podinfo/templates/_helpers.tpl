{{- define "podinfo.labels" -}}
app.kubernetes.io/name: podinfo
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
