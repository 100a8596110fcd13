package validation

import (
	"net/url"
	"slices"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

var statusPath = field.NewPath("status")

// Alert validates a new Alert.
func Alert(a *convoyv1alpha1.Alert) field.ErrorList {
	errs := ObjectMeta(&a.ObjectMeta, true)
	return append(errs, alertSpec(&a.Spec, specPath)...)
}

// AlertUpdate validates an updated Alert.
func AlertUpdate(a, old *convoyv1alpha1.Alert) field.ErrorList {
	errs := ObjectMetaUpdate(&a.ObjectMeta, &old.ObjectMeta)
	return append(errs, alertSpec(&a.Spec, specPath)...)
}

// AlertStatusUpdate validates a write of an Alert's status.
func AlertStatusUpdate(a, old *convoyv1alpha1.Alert) field.ErrorList {
	errs := ObjectMetaUpdate(&a.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, metav1validation.ValidateConditions(a.Status.Conditions, statusPath.Child("conditions"))...)
	if d := a.Status.LastDelivery; d != nil {
		errs = append(errs, alertEvent(d.Event, statusPath.Child("lastDelivery", "event"))...)
	}
	return errs
}

func alertSpec(spec *convoyv1alpha1.AlertSpec, path *field.Path) field.ErrorList {
	errs := labelSelector(spec.Selector, path.Child("selector"))
	if len(spec.Events) == 0 {
		errs = append(errs, field.Required(path.Child("events"), "at least one event: "+quoted(convoyv1alpha1.AlertEvents)))
	}
	seen := map[convoyv1alpha1.AlertEvent]bool{}
	for i, e := range spec.Events {
		p := path.Child("events").Index(i)
		if seen[e] {
			errs = append(errs, field.Duplicate(p, e))
			continue
		}
		seen[e] = true
		errs = append(errs, alertEvent(e, p)...)
	}
	provider := path.Child("provider")
	switch t := spec.Provider.Type; {
	case t == "":
		errs = append(errs, field.Required(provider.Child("type"), "one of "+quoted(convoyv1alpha1.AlertProviderTypes)))
	case !slices.Contains(convoyv1alpha1.AlertProviderTypes, t):
		errs = append(errs, field.NotSupported(provider.Child("type"), t, convoyv1alpha1.AlertProviderTypes))
	}
	errs = append(errs, secretName(spec.Provider.SecretRef.Name, provider.Child("secretRef", "name"),
		"a Secret of the Alert's namespace with the key "+convoyv1alpha1.SecretKeyAddress)...)
	if spec.UIURL != "" {
		errs = append(errs, httpURL(spec.UIURL, path.Child("uiURL"))...)
	}
	return errs
}

func alertEvent(e convoyv1alpha1.AlertEvent, path *field.Path) field.ErrorList {
	if slices.Contains(convoyv1alpha1.AlertEvents, e) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, e, convoyv1alpha1.AlertEvents)}
}

// Receiver validates a new Receiver.
func Receiver(r *convoyv1alpha1.Receiver) field.ErrorList {
	errs := ObjectMeta(&r.ObjectMeta, true)
	return append(errs, receiverSpec(&r.Spec, specPath)...)
}

// ReceiverUpdate validates an updated Receiver.
func ReceiverUpdate(r, old *convoyv1alpha1.Receiver) field.ErrorList {
	errs := ObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
	return append(errs, receiverSpec(&r.Spec, specPath)...)
}

// ReceiverStatusUpdate validates a write of a Receiver's status: the conditions, and
// a webhookPath of the form ReceiverWebhookPath makes.
func ReceiverStatusUpdate(r, old *convoyv1alpha1.Receiver) field.ErrorList {
	errs := ObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, metav1validation.ValidateConditions(r.Status.Conditions, statusPath.Child("conditions"))...)
	if p := r.Status.WebhookPath; p != "" && !convoyv1alpha1.IsReceiverWebhookPath(p) {
		errs = append(errs, field.Invalid(statusPath.Child("webhookPath"), p,
			"must be "+convoyv1alpha1.WebhookPathPrefix+" and 64 lowercase hex digits (v1alpha1.ReceiverWebhookPath)"))
	}
	return errs
}

func receiverSpec(spec *convoyv1alpha1.ReceiverSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t := spec.Type; {
	case t == "":
		errs = append(errs, field.Required(path.Child("type"), "one of "+quoted(convoyv1alpha1.ReceiverTypes)))
	case !slices.Contains(convoyv1alpha1.ReceiverTypes, t):
		errs = append(errs, field.NotSupported(path.Child("type"), t, convoyv1alpha1.ReceiverTypes))
	}
	errs = append(errs, secretName(spec.SecretRef.Name, path.Child("secretRef", "name"),
		"a Secret of the Receiver's namespace with the key "+convoyv1alpha1.SecretKeyToken)...)
	return append(errs, labelSelector(spec.Selector, path.Child("selector"))...)
}

// secretName checks the name of a Secret: required, and a DNS subdomain as every
// Secret's name is.
func secretName(name string, path *field.Path, what string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, what)}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// httpURL checks an absolute http or https URL with a host.
func httpURL(s string, path *field.Path) field.ErrorList {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, s, "must be an absolute http or https URL: "+err.Error())}
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(path, s, "must be an absolute http or https URL, such as https://convoy.example.com")}
	case u.Host == "" || u.Hostname() == "":
		return field.ErrorList{field.Invalid(path, s, "must name a host, such as https://convoy.example.com")}
	}
	return nil
}

// quoted lists values as `"a", "b"` for a message.
func quoted[T ~string](values []T) string {
	s := ""
	for i, v := range values {
		if i > 0 {
			s += ", "
		}
		s += `"` + string(v) + `"`
	}
	return s
}
