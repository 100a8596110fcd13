{{- define "oh.name" -}}{{ .Release.Name }}{{- end }}
{{/* Cluster-scoped names carry the namespace: one cluster, many test namespaces. */}}
{{- define "oh.clusterName" -}}{{ .Release.Namespace }}-{{ .Release.Name }}{{- end }}
{{- define "oh.hookJob" -}}
backoffLimit: 1
template:
  spec:
    restartPolicy: Never
    serviceAccountName: {{ .sa }}
    containers:
    - name: {{ .container }}
      image: {{ .image }}
      args: {{ toJson .args }}
{{- end }}
