{{- define "type" -}}
{{- $type := .type -}}
{{- $gv := .gv -}}
{{- $isKind := false -}}
{{- if not (hasSuffix "List" $type.Name) -}}
{{- range $type.Members -}}
{{- if eq .Name "metadata" -}}{{- $isKind = true -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if or $isKind (markdownShouldRenderType $type) }}

#### {{ $type.Name }}
{{ if $type.IsAlias }}
_Underlying type:_ _{{ markdownRenderTypeLink $type.UnderlyingType }}_
{{ end }}
{{ $type.Doc }}
{{ if $type.References }}
_Appears in:_
{{- range $type.SortedReferences }}
- {{ markdownRenderTypeLink . }}
{{- end }}
{{ end }}
{{- if $type.Members }}
| Field | Description | Default | Optional |
| --- | --- | --- | --- |
{{- if $isKind }}
| `apiVersion` _string_ | `{{ $gv.GroupVersionString }}` | | |
| `kind` _string_ | `{{ $type.Name }}` | | |
{{- end }}
{{- range $type.Members }}
| `{{ .Name }}` _{{ markdownRenderType .Type }}_ | {{ template "type_members" . }} | {{ markdownRenderDefault .Default }} | {{ if index .Markers "optional" }}yes{{ end }} |
{{- end }}
{{ end }}
{{- if $type.EnumValues }}
| Value | Description |
| --- | --- |
{{- range $type.EnumValues }}
| `{{ .Name }}` | {{ markdownRenderFieldDoc .Doc }} |
{{- end }}
{{ end }}
{{- end -}}
{{- end -}}
