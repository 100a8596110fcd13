// Package validation checks convoy objects before the apiserver stores them. Every
// function is pure: it returns a field.ErrorList whose paths name the offending field
// (the apiserver answers 422 Invalid with them) and never changes the object.
package validation
