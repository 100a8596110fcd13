// Package openapi holds the OpenAPI definitions of the convoy.kumodo.io/v1alpha1 types
// (and the Kubernetes types they embed) that convoy apiserver publishes; openapi-gen
// writes zz_generated.openapi.go from api/v1alpha1 (make generate).
package openapi
