package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// APIServiceName is the name of convoy's APIService.
var APIServiceName = convoyv1alpha1.Version + "." + convoyv1alpha1.GroupName

// Registration says how the host cluster's aggregator reaches a convoy apiserver that
// runs as a local process (tests, convoy dev).
type Registration struct {
	// Namespace and ServiceName name the Service the APIService points at; defaults
	// convoy-system and convoy-apiserver.
	Namespace, ServiceName string
	// Port is the port the convoy apiserver listens on, on localhost.
	Port int
	// CABundle is the PEM the aggregator verifies the serving certificate with
	// (Server.CABundle). The certificate must be valid for ServiceDNSName().
	CABundle []byte
	// Timeout bounds the wait for the APIService to become Available; default 1 minute.
	Timeout time.Duration
}

func (r Registration) withDefaults() Registration {
	if r.Namespace == "" {
		r.Namespace = "convoy-system"
	}
	if r.ServiceName == "" {
		r.ServiceName = "convoy-apiserver"
	}
	if r.Timeout == 0 {
		r.Timeout = time.Minute
	}
	return r
}

// ServiceDNSName is the name the aggregator checks the serving certificate against:
// <service>.<namespace>.svc. Put it in Options.AlternateDNS.
func (r Registration) ServiceDNSName() string {
	r = r.withDefaults()
	return r.ServiceName + "." + r.Namespace + ".svc"
}

// Register makes the host cluster route convoy.kumodo.io/v1alpha1 to a convoy
// apiserver listening on localhost: a Service of type ExternalName naming localhost
// (Endpoints refuse loopback addresses) and the APIService with the server's CA
// bundle. It waits until the APIService is Available.
func Register(ctx context.Context, host *rest.Config, r Registration) error {
	r = r.withDefaults()
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return fmt.Errorf("creating a client of the host cluster: %w", err)
	}
	agg, err := aggregator.NewForConfig(host)
	if err != nil {
		return fmt.Errorf("creating an aggregator client of the host cluster: %w", err)
	}
	if err := ensureNamespace(ctx, kube, r.Namespace); err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.ServiceName},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports: []corev1.ServicePort{{
				Name: "https", Port: int32(r.Port), TargetPort: intstr.FromInt32(int32(r.Port)),
			}},
		},
	}
	if err := createOrUpdate(ctx, kube.CoreV1().Services(r.Namespace), svc); err != nil {
		return fmt.Errorf("registering Service %s/%s: %w", r.Namespace, r.ServiceName, err)
	}
	port := int32(r.Port)
	apiService := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: APIServiceName},
		Spec: apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: r.Namespace, Name: r.ServiceName, Port: &port},
			Group:                convoyv1alpha1.GroupName,
			Version:              convoyv1alpha1.Version,
			CABundle:             r.CABundle,
			GroupPriorityMinimum: 1000,
			VersionPriority:      15,
		},
	}
	if err := createOrUpdate(ctx, agg.ApiregistrationV1().APIServices(), apiService); err != nil {
		return fmt.Errorf("registering APIService %s: %w", APIServiceName, err)
	}
	return WaitAvailable(ctx, host, r.Timeout)
}

// WaitAvailable waits until convoy's APIService is Available.
func WaitAvailable(ctx context.Context, host *rest.Config, timeout time.Duration) error {
	agg, err := aggregator.NewForConfig(host)
	if err != nil {
		return fmt.Errorf("creating an aggregator client of the host cluster: %w", err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, APIServiceName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiregistrationv1.Available {
				last = fmt.Sprintf("%s: %s", c.Reason, c.Message)
				return c.Status == apiregistrationv1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for APIService %s to become Available (last: %s): %w", APIServiceName, last, err)
	}
	return nil
}

// HostAccessClusterRole is the ClusterRole with what convoy apiserver reads on the
// host cluster: namespaces (NamespaceLifecycle admission), admission webhook and
// policy configurations, and API priority and fairness settings.
const HostAccessClusterRole = "convoy-apiserver"

// GrantHostAccess gives subject what a convoy apiserver needs on the host cluster:
// system:auth-delegator (TokenReview, SubjectAccessReview), the
// extension-apiserver-authentication-reader Role in kube-system (the front proxy's
// CA), and HostAccessClusterRole.
func GrantHostAccess(ctx context.Context, host *rest.Config, subject rbacv1.Subject) error {
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return fmt.Errorf("creating a client of the host cluster: %w", err)
	}
	rbac := kube.RbacV1()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: HostAccessClusterRole},
		Rules:      HostAccessRules(),
	}
	if err := createOrUpdate(ctx, rbac.ClusterRoles(), role); err != nil {
		return fmt.Errorf("granting host access: %w", err)
	}
	name := "convoy-apiserver:" + subject.Name
	for _, b := range []*rbacv1.ClusterRoleBinding{
		clusterRoleBinding(name+":auth-delegator", "system:auth-delegator", subject),
		clusterRoleBinding(name, HostAccessClusterRole, subject),
	} {
		if err := createOrUpdate(ctx, rbac.ClusterRoleBindings(), b); err != nil {
			return fmt.Errorf("granting host access: %w", err)
		}
	}
	reader := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: name + ":auth-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
		Subjects:   []rbacv1.Subject{subject},
	}
	if err := createOrUpdate(ctx, rbac.RoleBindings(metav1.NamespaceSystem), reader); err != nil {
		return fmt.Errorf("granting host access: %w", err)
	}
	return nil
}

// HostAccessRules are the rules of HostAccessClusterRole.
func HostAccessRules() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"*"}, Verbs: read},
		{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"flowschemas", "prioritylevelconfigurations"}, Verbs: read},
		// The authorization cache forgets its answers when RBAC changes (authzcache.go).
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}, Verbs: read},
	}
}

func clusterRoleBinding(name, role string, subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}
}

func ensureNamespace(ctx context.Context, kube kubernetes.Interface, name string) error {
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// object is what createOrUpdate writes.
type object interface {
	metav1.Object
}

// client is the part of a typed client createOrUpdate uses.
type client[T object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// createOrUpdate creates obj, or replaces the existing object of that name.
func createOrUpdate[T object](ctx context.Context, c client[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}
