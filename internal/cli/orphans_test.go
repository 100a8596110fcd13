package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestFormatOrphans(t *testing.T) {
	list := []Orphan{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "api-config", Release: ReleaseName{Namespace: "team", Name: "api"}},
		{Cluster: "eu-1", APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "api-reader", Release: ReleaseName{Namespace: "team", Name: "api"}},
	}
	want := "" +
		"CLUSTER   NAMESPACE   KIND                                    NAME         RELEASE\n" +
		"(host)    apps        ConfigMap                               api-config   team/api\n" +
		"eu-1      -           ClusterRole.rbac.authorization.k8s.io   api-reader   team/api\n"
	if d := cmp.Diff(want, FormatOrphans(list)); d != "" {
		t.Errorf("FormatOrphans (-want +got):\n%s", d)
	}
}

func TestDescribeOrphan(t *testing.T) {
	cases := map[string]struct {
		ref  v1.ObjectReference
		want string
	}{
		"namespaced": {
			ref:  v1.ObjectReference{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "api-config"},
			want: `configmap "api-config" deleted from namespace apps`,
		},
		"cluster-scoped, with a group": {
			ref:  v1.ObjectReference{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "api-reader"},
			want: `clusterrole.rbac.authorization.k8s.io "api-reader" deleted`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := describeOrphan(tc.ref, "deleted"); got != tc.want {
				t.Errorf("describeOrphan = %q, want %q", got, tc.want)
			}
		})
	}
}
