{{/*
common.resources.preset: requests and limits by size, each with ephemeral-storage,
as bitnami's resourcesPreset: (dict "type" "nano").
*/}}
{{- define "common.resources.preset" -}}
{{- $presets := dict
  "nano" (dict
    "requests" (dict "cpu" "100m" "memory" "128Mi" "ephemeral-storage" "50Mi")
    "limits" (dict "cpu" "150m" "memory" "192Mi" "ephemeral-storage" "2Gi"))
  "micro" (dict
    "requests" (dict "cpu" "250m" "memory" "256Mi" "ephemeral-storage" "50Mi")
    "limits" (dict "cpu" "375m" "memory" "384Mi" "ephemeral-storage" "2Gi"))
  "small" (dict
    "requests" (dict "cpu" "500m" "memory" "512Mi" "ephemeral-storage" "50Mi")
    "limits" (dict "cpu" "750m" "memory" "768Mi" "ephemeral-storage" "2Gi"))
-}}
{{- if hasKey $presets .type -}}
{{- index $presets .type | toYaml -}}
{{- else if ne .type "none" -}}
{{- printf "resourcesPreset %q is not one of none, nano, micro, small" .type | fail -}}
{{- end -}}
{{- end -}}
