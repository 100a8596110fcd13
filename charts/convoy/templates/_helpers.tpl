{{/* The image of the convoy processes: repository@digest, else repository:tag. */}}
{{- define "convoy.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The etcd client URLs of convoy apiserver, comma-separated: every member of the chart's etcd, else etcd.servers. */}}
{{- define "convoy.etcdServers" -}}
{{- if .Values.etcd.enabled -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "https://convoy-etcd-%d.convoy-etcd.%s.svc:2379" $i $.Release.Namespace) -}}
{{- end -}}
{{ join "," $urls }}
{{- else -}}
{{- if not .Values.etcd.servers }}{{ fail "etcd.servers: set your etcd's client URLs when etcd.enabled is false" }}{{ end -}}
{{ join "," .Values.etcd.servers }}
{{- end -}}
{{- end -}}

{{/* The Secret with the etcd client certificate of convoy's processes (ca.crt, tls.crt, tls.key); empty: plain HTTP to an external etcd. */}}
{{- define "convoy.etcdClientSecret" -}}
{{- if .Values.etcd.enabled -}}
{{ .Values.etcd.tls.clientSecretName }}
{{- else -}}
{{ .Values.etcd.externalClientSecretName }}
{{- end -}}
{{- end -}}

{{/* The DNS names of the chart's etcd members' certificate. */}}
{{- define "convoy.etcdServerNames" -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list "localhost" (printf "convoy-etcd.%s.svc" $ns) (printf "*.convoy-etcd.%s.svc" $ns) (printf "*.convoy-etcd.%s.svc.cluster.local" $ns) -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $names = append $names (printf "convoy-etcd-%d.convoy-etcd.%s.svc" $i $ns) -}}
{{- $names = append $names (printf "convoy-etcd-%d.convoy-etcd.%s.svc.cluster.local" $i $ns) -}}
{{- end -}}
{{ toJson $names }}
{{- end -}}

{{/* The shards to run one controller and observer Deployment for; [""] is one for every Release. */}}
{{- define "convoy.shards" -}}
{{- if .Values.shards }}{{ toJson .Values.shards }}{{ else }}[""]{{ end -}}
{{- end -}}

{{/* The lockdown's ServiceAccount of the observer: its own value, else the controller's. */}}
{{- define "convoy.observerDefaultServiceAccount" -}}
{{- .Values.observer.defaultServiceAccount | default .Values.controller.defaultServiceAccount -}}
{{- end }}
