package registry

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// Strategy is what the strategies of every convoy kind share: the scheme's typer,
// generateName, and the same answers to the questions that do not depend on the kind:
// no create on update, updates without a resourceVersion allowed, nothing to
// canonicalize, no warnings. A kind's strategy embeds it and adds scope, preparation
// and validation.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the Strategy of typer (the server's scheme).
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator}
}

// AllowCreateOnUpdate is false: a PUT of a missing object is NotFound, not a create.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: a PUT without a resourceVersion is allowed (last write wins).
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// Canonicalize does nothing: the convoy objects have no second spelling to normalise.
func (Strategy) Canonicalize(runtime.Object) {}

// WarningsOnCreate returns no warnings.
func (Strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// WarningsOnUpdate returns no warnings.
func (Strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// ResetFields is a GetResetFields answer: the fields of v1alpha1 objects that a
// write never sets, for server-side apply, each a dotted path ("metadata.labels").
func ResetFields(paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	set := make([]fieldpath.Path, 0, len(paths))
	for _, p := range paths {
		parts := strings.Split(p, ".")
		elements := make([]interface{}, len(parts))
		for i, part := range parts {
			elements[i] = part
		}
		set = append(set, fieldpath.MakePathOrDie(elements...))
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(convoyv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(set...),
	}
}

// Kind describes the main resource of a convoy kind for NewStore.
type Kind struct {
	// New and NewList make an empty object and list of the kind.
	New, NewList func() runtime.Object
	// Resource and Singular name the resource ("releases", "release").
	Resource, Singular string
	// Strategy creates, updates and deletes the main resource.
	Strategy interface {
		rest.RESTCreateStrategy
		rest.RESTUpdateStrategy
		rest.RESTDeleteStrategy
	}
	// ResetFields, when set, names the fields that a main-resource write never sets.
	ResetFields rest.ResetFieldsStrategy
	// Attrs gives an object's labels and selectable fields.
	Attrs storage.AttrFunc
	// Table makes the rows of `kubectl get`.
	Table rest.TableConvertor
}

// NewStore builds the etcd storage of k's main resource on the options of optsGetter.
func NewStore(k Kind, optsGetter generic.RESTOptionsGetter) (*genericregistry.Store, error) {
	store := &genericregistry.Store{
		NewFunc:     k.New,
		NewListFunc: k.NewList,
		PredicateFunc: func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: k.Attrs}
		},
		DefaultQualifiedResource:  convoyv1alpha1.Resource(k.Resource),
		SingularQualifiedResource: convoyv1alpha1.Resource(k.Singular),
		CreateStrategy:            k.Strategy,
		UpdateStrategy:            k.Strategy,
		DeleteStrategy:            k.Strategy,
		ResetFieldsStrategy:       k.ResetFields,
		TableConvertor:            k.Table,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: k.Attrs}); err != nil {
		return nil, fmt.Errorf("building the storage of %s: %w", k.Resource, err)
	}
	return store, nil
}

// WithUpdate returns a copy of store that updates with s: the storage of a
// subresource that writes a part of the object (status, pin, ...).
func WithUpdate(store *genericregistry.Store, s rest.RESTUpdateStrategy, reset rest.ResetFieldsStrategy) *genericregistry.Store {
	copied := *store
	copied.UpdateStrategy = s
	copied.ResetFieldsStrategy = reset
	return &copied
}

// REST is the storage of a main resource: its short names and the category
// `convoy`, so that `kubectl get convoy` lists every kind.
type REST struct {
	*genericregistry.Store
	Short []string
}

var (
	_ rest.ShortNamesProvider = &REST{}
	_ rest.CategoriesProvider = &REST{}
)

// ShortNames makes `kubectl get <short name>` work.
func (r *REST) ShortNames() []string { return r.Short }

// Categories puts the kind in `kubectl get convoy`.
func (r *REST) Categories() []string { return []string{"convoy"} }
