{{- define "gvDetails" -}}
{{- $gv := . -}}

## {{ $gv.GroupVersionString }}

{{ $gv.Doc }}

### Resource types
{{ range $gv.SortedTypes }}
{{- $t := . -}}
{{- if not (hasSuffix "List" $t.Name) -}}
{{- range $t.Members -}}
{{- if eq .Name "metadata" }}
- {{ markdownRenderTypeLink $t }}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end }}

### Types
{{ range $gv.SortedTypes }}
{{ template "type" (dict "type" . "gv" $gv) }}
{{- end }}

{{- end -}}
