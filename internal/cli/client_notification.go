package cli

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// GetAlert reads one Alert.
func (c *Client) GetAlert(ctx context.Context, ns, name string) (*v1.Alert, error) {
	out := &v1.Alert{}
	err := c.rest.Get().Namespace(ns).Resource(v1.ResourceAlerts).Name(name).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "get", resource: v1.ResourceAlerts, namespace: ns, name: name}, err)
}

// ListAlerts lists the Alerts of ns, or of every namespace when ns is empty, sorted
// by namespace and name.
func (c *Client) ListAlerts(ctx context.Context, ns string) (*v1.AlertList, error) {
	out := &v1.AlertList{}
	if err := c.list(ctx, v1.ResourceAlerts, ns, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out.Items, byNamespaceAndName)
	return out, nil
}

// GetReceiver reads one Receiver.
func (c *Client) GetReceiver(ctx context.Context, ns, name string) (*v1.Receiver, error) {
	out := &v1.Receiver{}
	err := c.rest.Get().Namespace(ns).Resource(v1.ResourceReceivers).Name(name).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "get", resource: v1.ResourceReceivers, namespace: ns, name: name}, err)
}

// ListReceivers lists the Receivers of ns, or of every namespace when ns is empty,
// sorted by namespace and name.
func (c *Client) ListReceivers(ctx context.Context, ns string) (*v1.ReceiverList, error) {
	out := &v1.ReceiverList{}
	if err := c.list(ctx, v1.ResourceReceivers, ns, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out.Items, byNamespaceAndName)
	return out, nil
}

// AlertWarnings lists the Warning Events of the Alerts of ns (every namespace when
// ns is empty): convoy controller records one per failed delivery attempt. The
// cluster keeps Events for a while only (kube-apiserver's --event-ttl, 1h by default).
func (c *Client) AlertWarnings(ctx context.Context, ns string) ([]corev1.Event, error) {
	sel := fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.kind", "Alert"),
		fields.OneTermEqualSelector("type", corev1.EventTypeWarning),
	)
	list, err := c.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	out := list.Items[:0]
	for _, e := range list.Items {
		if e.InvolvedObject.APIVersion == "" || e.InvolvedObject.APIVersion == v1.SchemeGroupVersion.String() {
			out = append(out, e)
		}
	}
	return out, nil
}
