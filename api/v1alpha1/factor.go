package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Why Factor and not float64 or resource.Quantity: the Kubernetes API conventions
// discourage floats (their text does not round-trip across languages), and a
// resource.Quantity prints 1.5 back as "1500m". Factor keeps the decimal text the user
// wrote, so `factor: 1.5` reads back as 1.5, and its OpenAPI type is number, so kubectl
// explain and server-side apply see a number. It is a struct (like resource.Quantity)
// so that openapi-gen uses its OpenAPISchemaType.

// Factor is a decimal number such as 2 or 1.5, written as a plain number. A quoted
// number ("1.5") is accepted on input and written back unquoted.
type Factor struct {
	// Decimal is the number's decimal text, such as "1.5"; build a Factor with
	// ParseFactor or NewFactor. It is exported so that reflection-based comparisons
	// (apimachinery's semantic equality) work on objects that hold a Factor.
	Decimal string `json:"-"`
}

// NewFactor returns the Factor of a float64.
func NewFactor(f float64) *Factor {
	return &Factor{Decimal: strconv.FormatFloat(f, 'f', -1, 64)}
}

// ParseFactor parses the decimal text of a factor, such as "1.5".
func ParseFactor(text string) (Factor, error) {
	f := Factor{Decimal: text}
	if _, err := f.Float64(); err != nil {
		return Factor{}, err
	}
	return f, nil
}

// Float64 returns the factor's value.
func (f Factor) Float64() (float64, error) {
	if f.Decimal == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(f.Decimal, 64)
	if err != nil {
		return 0, fmt.Errorf("factor %q is not a number: %w", f.Decimal, err)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("factor %q is not a finite number", f.Decimal)
	}
	return v, nil
}

// String returns the decimal text.
func (f Factor) String() string {
	if f.Decimal == "" {
		return "0"
	}
	return f.Decimal
}

// MarshalJSON writes the factor as a JSON number.
func (f Factor) MarshalJSON() ([]byte, error) {
	if _, err := f.Float64(); err != nil {
		return nil, err
	}
	return []byte(f.String()), nil
}

// UnmarshalJSON reads a JSON number, or a string that holds one.
func (f *Factor) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	text := string(data)
	if len(data) > 0 && data[0] == '"' {
		if err := json.Unmarshal(data, &text); err != nil {
			return fmt.Errorf("factor: %w", err)
		}
	}
	// A JSON number, as the decoder would accept it unquoted.
	var n json.Number
	if err := json.Unmarshal([]byte(text), &n); err != nil {
		return fmt.Errorf("factor must be a number, got %s", data)
	}
	v, err := ParseFactor(n.String())
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// OpenAPISchemaType is used by openapi-gen: a Factor is a number.
func (Factor) OpenAPISchemaType() []string { return []string{"number"} }

// OpenAPISchemaFormat is used by openapi-gen: no format.
func (Factor) OpenAPISchemaFormat() string { return "" }
