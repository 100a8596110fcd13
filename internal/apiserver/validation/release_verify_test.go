package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// verifiedRelease is a valid Release of repository with spec.chart.verify as mutate
// leaves it.
func verifiedRelease(repository string, mutate func(v *convoyv1alpha1.ChartVerify)) *convoyv1alpha1.Release {
	r := validRelease()
	r.Spec.Chart.Repository = repository
	r.Spec.Chart.Verify = &convoyv1alpha1.ChartVerify{}
	mutate(r.Spec.Chart.Verify)
	return r
}

func TestReleaseChartVerify(t *testing.T) {
	const oci, web = "oci://registry.example.com/charts", "https://charts.example.com"
	keys := &convoyv1alpha1.LocalObjectReference{Name: "chart-keys"}
	keyed := func(p convoyv1alpha1.ChartVerifyProvider) func(v *convoyv1alpha1.ChartVerify) {
		return func(v *convoyv1alpha1.ChartVerify) { v.Provider, v.SecretRef = p, keys }
	}
	keyless := func(k convoyv1alpha1.KeylessVerify) func(v *convoyv1alpha1.ChartVerify) {
		return func(v *convoyv1alpha1.ChartVerify) { v.Provider, v.Keyless = convoyv1alpha1.ChartVerifyCosign, &k }
	}
	const issuer, subject = "https://token.actions.githubusercontent.com", "https://github.com/org/charts/.github/workflows/release.yaml@refs/heads/main"
	cases := map[string]struct {
		release *convoyv1alpha1.Release
		fields  []string
		detail  string
	}{
		"cosign with a key": {release: verifiedRelease(oci, keyed(convoyv1alpha1.ChartVerifyCosign))},
		"cosign keyless":    {release: verifiedRelease(oci, keyless(convoyv1alpha1.KeylessVerify{Issuer: issuer, Subject: subject}))},
		"cosign keyless, regular expressions": {release: verifiedRelease(oci, keyless(convoyv1alpha1.KeylessVerify{
			IssuerRegExp: `^https://token\.actions\.githubusercontent\.com$`, SubjectRegExp: `^https://github\.com/org/`}))},
		"helm":             {release: verifiedRelease(web, keyed(convoyv1alpha1.ChartVerifyHelm))},
		"helm, plain http": {release: verifiedRelease("http://charts.example.com", keyed(convoyv1alpha1.ChartVerifyHelm))},
		"no provider": {release: verifiedRelease(web, func(v *convoyv1alpha1.ChartVerify) { v.SecretRef = keys }),
			fields: []string{"spec.chart.verify.provider"}},
		"unknown provider": {release: verifiedRelease(web, keyed("notary")),
			fields: []string{"spec.chart.verify.provider"}, detail: `"cosign", "helm"`},
		"cosign of an http repository": {release: verifiedRelease(web, keyed(convoyv1alpha1.ChartVerifyCosign)),
			fields: []string{"spec.chart.verify.provider"}, detail: "use helm"},
		"helm of an OCI registry": {release: verifiedRelease(oci, keyed(convoyv1alpha1.ChartVerifyHelm)),
			fields: []string{"spec.chart.verify.provider"}, detail: "use cosign"},
		"cosign without key or identity": {release: verifiedRelease(oci, func(v *convoyv1alpha1.ChartVerify) { v.Provider = convoyv1alpha1.ChartVerifyCosign }),
			fields: []string{"spec.chart.verify"}, detail: "secretRef"},
		"cosign with a key and keyless": {release: verifiedRelease(oci, func(v *convoyv1alpha1.ChartVerify) {
			v.Provider, v.SecretRef, v.Keyless = convoyv1alpha1.ChartVerifyCosign, keys, &convoyv1alpha1.KeylessVerify{Issuer: issuer, Subject: subject}
		}), fields: []string{"spec.chart.verify.keyless"}, detail: "not both"},
		"keyless without issuer": {release: verifiedRelease(oci, keyless(convoyv1alpha1.KeylessVerify{Subject: subject})),
			fields: []string{"spec.chart.verify.keyless.issuer"}, detail: "issuerRegExp"},
		"keyless without subject": {release: verifiedRelease(oci, keyless(convoyv1alpha1.KeylessVerify{IssuerRegExp: ".*"})),
			fields: []string{"spec.chart.verify.keyless.subject"}, detail: "subjectRegExp"},
		"keyless with subject and subjectRegExp": {release: verifiedRelease(oci, keyless(convoyv1alpha1.KeylessVerify{Issuer: issuer, Subject: subject, SubjectRegExp: ".*"})),
			fields: []string{"spec.chart.verify.keyless.subjectRegExp"}, detail: "not both"},
		"keyless regular expression that does not compile": {release: verifiedRelease(oci, keyless(convoyv1alpha1.KeylessVerify{Issuer: issuer, SubjectRegExp: "(org"})),
			fields: []string{"spec.chart.verify.keyless.subjectRegExp"}, detail: "not a regular expression"},
		"helm without secretRef": {release: verifiedRelease(web, func(v *convoyv1alpha1.ChartVerify) { v.Provider = convoyv1alpha1.ChartVerifyHelm }),
			fields: []string{"spec.chart.verify.secretRef"}, detail: "keyring"},
		"helm keyless": {release: verifiedRelease(web, func(v *convoyv1alpha1.ChartVerify) {
			v.Provider, v.SecretRef, v.Keyless = convoyv1alpha1.ChartVerifyHelm, keys, &convoyv1alpha1.KeylessVerify{Issuer: issuer, Subject: subject}
		}), fields: []string{"spec.chart.verify.keyless"}, detail: "cosign only"},
		"empty secret name": {release: verifiedRelease(web, func(v *convoyv1alpha1.ChartVerify) {
			v.Provider, v.SecretRef = convoyv1alpha1.ChartVerifyHelm, &convoyv1alpha1.LocalObjectReference{}
		}), fields: []string{"spec.chart.verify.secretRef.name"}},
		"chart from Git": {release: func() *convoyv1alpha1.Release {
			r := gitRelease(nil)
			r.Spec.Chart.Verify = &convoyv1alpha1.ChartVerify{Provider: convoyv1alpha1.ChartVerifyHelm, SecretRef: keys}
			return r
		}(), fields: []string{"spec.chart.verify"}, detail: "git.verify"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Release(tc.release, ReleaseOptions{})
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Fatalf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.detail != "" && !strings.Contains(errs[0].Error(), tc.detail) {
				t.Errorf("error %q does not say %q", errs[0].Error(), tc.detail)
			}
		})
	}
}

// A ReleaseSet's template is validated as a Release's spec: its spec.chart.verify too.
func TestReleaseSetTemplateChartVerify(t *testing.T) {
	s := validReleaseSet()
	s.Spec.Template.Spec.Chart.Verify = &convoyv1alpha1.ChartVerify{Provider: convoyv1alpha1.ChartVerifyCosign,
		SecretRef: &convoyv1alpha1.LocalObjectReference{Name: "chart-keys"}}
	var got []string
	for _, e := range ReleaseSet(s, ReleaseOptions{}) {
		got = append(got, e.Field)
	}
	if diff := cmp.Diff([]string{"spec.template.spec.chart.verify.provider"}, got); diff != "" {
		t.Errorf("error fields (-want +got):\n%s", diff)
	}
}
