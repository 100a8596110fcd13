package render

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/yaml"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/gz"
)

// SecretsAccess says whether the user of a request may read the Secrets of a
// namespace. Renders hold rendered Secrets with their data; a user who may not read
// the namespace's Secrets is served Renders whose Secrets carry digests instead.
type SecretsAccess interface {
	MayReadSecrets(ctx context.Context, namespace string) bool
}

// AuthorizerAccess answers with the API server's authorizer (kube-apiserver's RBAC,
// through a SubjectAccessReview): may the request's user get secrets in the namespace?
type AuthorizerAccess struct {
	Authorizer authorizer.Authorizer
}

// MayReadSecrets is false without a user, and when the authorizer does not allow or fails.
func (a AuthorizerAccess) MayReadSecrets(ctx context.Context, namespace string) bool {
	user, ok := request.UserFrom(ctx)
	if !ok || a.Authorizer == nil {
		return false
	}
	decision, _, err := a.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: user, Verb: "get", Namespace: namespace, APIVersion: "v1", Resource: "secrets", ResourceRequest: true,
	})
	return err == nil && decision == authorizer.DecisionAllow
}

// RedactSecrets returns a Render's manifests (a gzip'd YAML stream, one "---"
// document per object) with the data of every core/v1 Secret replaced by the sha256
// of each value, in the annotation convoy.kumodo.io/redacted-data ({"key":
// "sha256:…"}); data and stringData are removed. Every other document is kept byte
// for byte. changed says whether a Secret was found.
func RedactSecrets(manifests []byte) (out []byte, changed bool, err error) {
	stream, err := gz.Decompress(manifests)
	if err != nil {
		return nil, false, fmt.Errorf("render manifests: %w", err)
	}
	docs := strings.Split("\n"+string(stream), "\n---\n")
	for i, doc := range docs {
		redacted, ok, err := redactSecretDocument(doc)
		if err != nil {
			return nil, false, err
		}
		if ok {
			docs[i], changed = redacted, true
		}
	}
	if !changed {
		return manifests, false, nil
	}
	out, err = gz.Compress(gz.Default, func(zw io.Writer) error {
		_, err := io.WriteString(zw, strings.TrimPrefix(strings.Join(docs, "\n---\n"), "\n"))
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// redactSecretDocument redacts one YAML document when it is a Secret.
func redactSecretDocument(doc string) (string, bool, error) {
	if strings.TrimSpace(doc) == "" {
		return doc, false, nil
	}
	var obj map[string]interface{}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return "", false, fmt.Errorf("render manifests: %w", err)
	}
	if obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return doc, false, nil
	}
	digests := map[string]string{}
	if data, ok := obj["data"].(map[string]interface{}); ok {
		for k, v := range data {
			s, _ := v.(string)
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				raw = []byte(s)
			}
			digests[k] = digest(raw)
		}
	}
	if data, ok := obj["stringData"].(map[string]interface{}); ok {
		for k, v := range data {
			s, _ := v.(string)
			digests[k] = digest([]byte(s))
		}
	}
	delete(obj, "data")
	delete(obj, "stringData")
	encoded, err := json.Marshal(digests)
	if err != nil {
		return "", false, err
	}
	meta, _ := obj["metadata"].(map[string]interface{})
	if meta == nil {
		meta = map[string]interface{}{}
		obj["metadata"] = meta
	}
	annotations, _ := meta["annotations"].(map[string]interface{})
	if annotations == nil {
		annotations = map[string]interface{}{}
		meta["annotations"] = annotations
	}
	annotations[convoyv1alpha1.AnnotationRedactedData] = string(encoded)
	out, err := yaml.Marshal(obj)
	if err != nil {
		return "", false, err
	}
	return strings.TrimSuffix(string(out), "\n") + trailingNewlines(doc), true, nil
}

func trailingNewlines(doc string) string {
	return doc[len(strings.TrimRight(doc, "\n")):]
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
