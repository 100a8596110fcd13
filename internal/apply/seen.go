package apply

import (
	"context"
	"encoding/json"
	"hash/fnv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/diff"
)

// Seen is what an apply saw of its objects on the target: for each object that it
// found or left as rendered, the object's uid and resourceVersion then, and a digest
// of the rendered object (Plan.Seen). Given to the next DryRun, it spares the GET of
// an object that nobody wrote since: the dry run of the same rendered object answers
// with the same uid and resourceVersion, so the live object is still what that apply
// made of it, and applying it again changes nothing. An object written since (by
// anyone: a drift, a controller's status) is read and compared as without Seen. The
// zero value (nil) knows nothing. Seen is the caller's memory: keep it per Release,
// in memory only (a restart starts without it). It is small: 24 bytes an object, three
// 64-bit hashes (at 10,000 Releases of 4 objects, the object names it held were 5 MB).
type Seen []sighting

type sighting struct {
	// id is a hash of the object's identity (idOf).
	id uint64
	// at is a hash of the object's uid and resourceVersion (at).
	at uint64
	// digest is the rendered object's (digest).
	digest uint64
}

// hash64 is the FNV-1a hash of parts, each ended by a zero byte.
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// idOf is a hash of an object's identity.
func idOf(id identity) uint64 { return hash64(id.group, id.kind, id.namespace, id.name) }

// at is a hash of an object's uid and resourceVersion: where it was seen.
func at(uid, version string) uint64 { return hash64(uid, version) }

// index is s by object.
func (s Seen) index() map[uint64]sighting {
	if len(s) == 0 {
		return nil
	}
	m := make(map[uint64]sighting, len(s))
	for _, x := range s {
		m[x.id] = x
	}
	return m
}

// sightingOf is the sighting of o as the apply found or left it as rendered; false
// when it is not known (not checked, changed by no apply yet, failed).
func (o *planned) sightingOf() (sighting, bool) {
	if o.liveUID == "" || o.liveVersion == "" {
		return sighting{}, false
	}
	return sighting{id: idOf(identityOf(o.entry.ObjectReference)), at: at(o.liveUID, o.liveVersion), digest: o.digestOf()}, true
}

// digestOf is the digest of the rendered object: a hash of its JSON (bodyOf; encoding/json
// sorts map keys), computed once.
func (o *planned) digestOf() uint64 {
	if o.digest == 0 {
		b, err := o.bodyOf()
		if err != nil {
			return 0 // never equal to a sighting's: the object is read
		}
		h := fnv.New64a()
		_, _ = h.Write(b)
		o.digest = h.Sum64()
	}
	return o.digest
}

// bodyOf is the rendered object's JSON, made once: the body of its dry runs and apply
// (send) and what its digest hashes.
func (o *planned) bodyOf() ([]byte, error) {
	if o.body == nil {
		b, err := json.Marshal(o.Object.Object.Object)
		if err != nil {
			return nil, err
		}
		o.body = b
	}
	return o.body, nil
}

// Seen returns what the plan's dry run and apply saw of its objects as rendered: those
// the dry run found unchanged and those the apply got through. Call it after the
// apply; give it to the next DryRun of the Release.
func (p *Plan) Seen() Seen {
	out := make(Seen, 0, len(p.objects))
	for _, o := range p.objects {
		if s, ok := o.sightingOf(); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// diffSeen is the dry run of an object that an earlier apply saw as rendered (s): the
// dry run alone when it answers with the uid and resourceVersion seen, the object
// being rendered the same; else a GET, and the comparison of the live object with the
// dry run's answer, as diffKnown makes. The dry run goes without field validation
// (fieldValidation=Ignore, which drops an unknown field as the default Warn does, but
// without the strict second parse that finds it): the same rendered object was
// validated, its warnings logged, when it was first seen.
func (a *Applier) diffSeen(ctx context.Context, o *planned, s sighting) error {
	dryRun, err := a.send(ctx, o, client.DryRunAll, client.FieldValidation(metav1.FieldValidationIgnore))
	if err != nil {
		return err
	}
	if dryRun.head.ResourceVersion == "" {
		o.state = created
		return nil
	}
	if o.helm, err = helmManages(dryRun.raw); err != nil {
		return err
	}
	if uid, version := dryRun.head.UID, dryRun.head.ResourceVersion; at(uid, version) == s.at {
		o.state = unchanged
		o.liveUID, o.liveVersion, o.liveGeneration = uid, version, dryRun.head.Generation
		return nil
	}
	answer, err := dryRun.object()
	if err != nil {
		return err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(answer.GroupVersionKind())
	err = a.client.Get(ctx, client.ObjectKeyFromObject(answer), live)
	switch {
	case apierrors.IsNotFound(err):
		o.state = created
		return nil
	case err != nil:
		return err
	}
	fields, err := diff.Fields(live, answer)
	if err != nil {
		return err
	}
	if len(fields) > 0 {
		o.state = configured
		return nil
	}
	o.state = unchanged
	o.liveUID, o.liveVersion, o.liveGeneration = string(live.GetUID()), live.GetResourceVersion(), live.GetGeneration()
	return nil
}
