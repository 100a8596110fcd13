package dev

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// CreateDeployer creates, under the lockdown (Options.DefaultServiceAccount), the
// ServiceAccount name in namespace and binds it to the ClusterRole admin there, as
// an operator does for each team (docs/operations/tenancy.md, "Multi-tenancy"): the
// example's Release may then do anything in its namespace and nothing elsewhere.
func CreateDeployer(ctx context.Context, host *rest.Config, namespace, name string) error {
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return err
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if _, err := kube.CoreV1().ServiceAccounts(namespace).Apply(ctx, corev1ac.ServiceAccount(name, namespace), opts); err != nil {
		return fmt.Errorf("create the ServiceAccount %s/%s: %w", namespace, name, err)
	}
	b := rbacv1ac.RoleBinding(name, namespace).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName("admin")).
		WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(name).WithNamespace(namespace))
	if _, err := kube.RbacV1().RoleBindings(namespace).Apply(ctx, b, opts); err != nil {
		return fmt.Errorf("bind the ServiceAccount %s/%s to admin: %w", namespace, name, err)
	}
	return nil
}
