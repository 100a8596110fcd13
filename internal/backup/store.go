package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Suffix ends the name of every backup file.
const Suffix = ".backup.gz"

// Name is the file name of a backup taken at t: names sort as their times do.
func Name(t time.Time) string { return "convoy-" + t.UTC().Format("20060102T150405.000Z") + Suffix }

// Store is where backups are kept: a folder (a PersistentVolumeClaim's) or an
// S3-compatible bucket.
type Store interface {
	// Put writes the backup name from r; a reader never sees it half-written.
	Put(ctx context.Context, name string, r io.Reader) error
	// Open reads the backup name.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// List returns the names of the backups (Suffix), sorted oldest first.
	List(ctx context.Context) ([]string, error)
	// Delete removes the backup name.
	Delete(ctx context.Context, name string) error
	// String names the place for messages.
	String() string
}

// S3Options reach an S3-compatible service. Credentials come from the
// environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or MINIO_ROOT_USER and
// MINIO_ROOT_PASSWORD) or, without them, from the instance's IAM role.
type S3Options struct {
	// Endpoint is host[:port] of the service; empty: s3.amazonaws.com.
	Endpoint string
	// Insecure talks plain HTTP.
	Insecure bool
	Region   string
}

// Open parses a location: s3://bucket/some/prefix[/name.backup.gz] or a folder
// [/name.backup.gz]. It returns the store and, when the location names one backup
// file, that name.
func Open(location string, s3 S3Options) (Store, string, error) {
	if location == "" {
		return nil, "", errors.New("no backup location: give a folder or s3://bucket/prefix")
	}
	name := ""
	if strings.HasSuffix(location, Suffix) {
		name = path.Base(location)
		location = strings.TrimSuffix(location, name)
	}
	if !strings.HasPrefix(location, "s3://") {
		if location == "" {
			location = "."
		}
		return Dir(filepath.Clean(location)), name, nil
	}
	u, err := url.Parse(location)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("backup location %q: want s3://bucket/prefix", location)
	}
	st, err := NewS3(s3, u.Host, strings.Trim(u.Path, "/"))
	return st, name, err
}

// Dir keeps backups as files of a folder.
type Dir string

func (d Dir) String() string { return string(d) }

// Put writes name.partial, syncs it and renames it to name.
func (d Dir) Put(_ context.Context, name string, r io.Reader) (err error) {
	if err := os.MkdirAll(string(d), 0o750); err != nil {
		return err
	}
	final := filepath.Join(string(d), name)
	f, err := os.OpenFile(final+".partial", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = io.Copy(f, r); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), final)
}

func (d Dir) Open(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(string(d), name))
}

func (d Dir) List(context.Context) ([]string, error) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Suffix) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

func (d Dir) Delete(_ context.Context, name string) error {
	return os.Remove(filepath.Join(string(d), name))
}

// S3 keeps backups as objects under a prefix of a bucket.
type S3 struct {
	client         *minio.Client
	bucket, prefix string
}

// NewS3 returns the store of bucket/prefix.
func NewS3(o S3Options, bucket, prefix string) (*S3, error) {
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	c, err := minio.New(endpoint, &minio.Options{
		Creds: credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.IAM{},
		}),
		Secure: !o.Insecure,
		Region: o.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 endpoint %s: %w", endpoint, err)
	}
	return &S3{client: c, bucket: bucket, prefix: prefix}, nil
}

func (s *S3) String() string { return "s3://" + path.Join(s.bucket, s.prefix) }

func (s *S3) key(name string) string { return path.Join(s.prefix, name) }

// Put uploads the object (multipart, streamed); S3 shows it only once complete.
// Each part carries its Content-MD5 instead of a streaming (aws-chunked)
// signature of its SHA-256, which not every S3-compatible server reads; the backup
// file has its own SHA-256, checked when it is read back.
func (s *S3) Put(ctx context.Context, name string, r io.Reader) error {
	_, err := s.client.PutObject(ctx, s.bucket, s.key(name), r, -1, minio.PutObjectOptions{
		ContentType: "application/gzip", SendContentMd5: true, DisableContentSha256: true,
	})
	if err != nil {
		return fmt.Errorf("uploading %s to %s: %w", name, s, err)
	}
	return nil
}

func (s *S3) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	o, err := s.client.GetObject(ctx, s.bucket, s.key(name), minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", name, s, err)
	}
	if _, err := o.Stat(); err != nil {
		o.Close()
		return nil, fmt.Errorf("reading %s from %s: %w", name, s, err)
	}
	return o, nil
}

func (s *S3) List(ctx context.Context) ([]string, error) {
	prefix := s.prefix
	if prefix != "" {
		prefix += "/"
	}
	var out []string
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing %s: %w", s, o.Err)
		}
		if n, ok := strings.CutPrefix(o.Key, prefix); ok && !strings.Contains(n, "/") && strings.HasSuffix(n, Suffix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *S3) Delete(ctx context.Context, name string) error {
	return s.client.RemoveObject(ctx, s.bucket, s.key(name), minio.RemoveObjectOptions{})
}

// Prune deletes all but the newest retain backups of st and returns their names.
func Prune(ctx context.Context, st Store, retain int) ([]string, error) {
	names, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	if retain < 1 || len(names) <= retain {
		return nil, nil
	}
	old := names[:len(names)-retain]
	for _, n := range old {
		if err := st.Delete(ctx, n); err != nil {
			return nil, fmt.Errorf("deleting the old backup %s from %s: %w", n, st, err)
		}
	}
	return old, nil
}

// Latest is the name of the newest backup of st.
func Latest(ctx context.Context, st Store) (string, error) {
	names, err := st.List(ctx)
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no backup (*%s) in %s", Suffix, st)
	}
	return names[len(names)-1], nil
}
