package cli

import (
	v1 "kumodo.io/convoy/api/v1alpha1"
)

// ValidateRenderRef checks a render ref given on the command line
// (v1alpha1.RenderRef.Validate). The error is a usage error (exit 2).
func ValidateRenderRef(ref string) error {
	if err := v1.RenderRef(ref).Validate(); err != nil {
		return usageErrorf("%v; a render ref is sha256: followed by 64 lowercase hex digits, as `kubectl convoy release history NAME` shows in full with -o yaml", err)
	}
	return nil
}

// ShortRef is a render ref as tables show it (v1alpha1.RenderRef.Short), "-" for none.
func ShortRef(ref string) string {
	if ref == "" {
		return "-"
	}
	return v1.RenderRef(ref).Short()
}
