{{- define "awj.hookAnnotations" -}}
helm.sh/hook: pre-install,pre-upgrade,post-install,post-upgrade
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}
{{- define "awj.name" -}}{{ .Release.Name }}-admission{{- end }}
