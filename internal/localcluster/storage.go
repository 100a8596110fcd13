package localcluster

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

//go:generate sh -c "go run -C ../../hack/kube/kwok ./stages -volume > kwok-volume-stages.yaml"

// volumeStages are kwok's own volume stages (kustomize/stage/volume/fast of the kwok
// that hack/kube builds): a PersistentVolumeClaim of the StorageClass kwok-volume
// gets a hostPath PersistentVolume (a record: nothing is made on disk) and is Bound;
// a deleted claim releases its volume, which is then deleted. They are embedded
// rather than built into bin/k8s/ so that a binary folder made before them needs
// no rebuild.
//
//go:embed kwok-volume-stages.yaml
var volumeStages []byte

const (
	// storageClassName is the default StorageClass of a cluster with workloads; the
	// volume stages act on claims of this class only.
	storageClassName = "kwok-volume"
	// storageProvisioner is the class's provisioner: no controller but kwok's stages
	// answers to it.
	storageProvisioner = "kwok.x-k8s.io/volume"
	// isDefaultClassAnnotation marks the StorageClass that claims without a
	// storageClassName get (kube-apiserver's DefaultStorageClass admission).
	isDefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"
)

// writeVolumeStages writes the volume stages into the cluster's folder for kwok's
// --config and returns the file's path.
func (c *Cluster) writeVolumeStages() (string, error) {
	path := filepath.Join(c.dir, "kwok-volume-stages.yaml")
	if err := os.WriteFile(path, volumeStages, 0o644); err != nil {
		return "", fmt.Errorf("write kwok's volume stages: %w", err)
	}
	return path, nil
}

// defaultStorageClass is the cluster's default StorageClass (kwok's): Immediate
// binding, so a claim is Bound before the scheduler places its Pod, and the
// volume has no node affinity: any simulated node fits.
func defaultStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        storageClassName,
			Annotations: map[string]string{isDefaultClassAnnotation: "true"},
		},
		Provisioner:       storageProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
}

// ensureStorageClass creates the default StorageClass unless it exists (a
// reused state folder keeps it, and a user may have edited it).
func ensureStorageClass(ctx context.Context, cs kubernetes.Interface) error {
	_, err := cs.StorageV1().StorageClasses().Create(ctx, defaultStorageClass(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the default StorageClass %s: %w", storageClassName, err)
	}
	return nil
}
