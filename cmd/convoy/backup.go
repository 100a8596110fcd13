package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/backup"
)

// etcdFlags reach convoy's etcd with the flags convoy apiserver has for it.
type etcdFlags struct {
	servers                   []string
	caFile, certFile, keyFile string
	prefix                    string
	s3                        backup.S3Options
	timeout                   time.Duration
}

func (f *etcdFlags) bind(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.servers, "etcd-servers", nil, "etcd client URLs, as convoy apiserver's --etcd-servers")
	fs.StringVar(&f.caFile, "etcd-cafile", "", "CA bundle of etcd's serving certificate")
	fs.StringVar(&f.certFile, "etcd-certfile", "", "client certificate for etcd")
	fs.StringVar(&f.keyFile, "etcd-keyfile", "", "key of the client certificate for etcd")
	fs.StringVar(&f.prefix, "etcd-prefix", apiserver.DefaultEtcdPrefix, "convoy apiserver's --etcd-prefix")
	fs.StringVar(&f.s3.Endpoint, "s3-endpoint", "", "host[:port] of the S3-compatible service for s3:// locations (default s3.amazonaws.com); "+
		"credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the instance's IAM role")
	fs.BoolVar(&f.s3.Insecure, "s3-insecure", false, "talk plain HTTP to --s3-endpoint")
	fs.StringVar(&f.s3.Region, "s3-region", "", "region of the bucket (default: asked from the service)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "how long the whole operation may take")
}

func (f *etcdFlags) client() (*clientv3.Client, error) {
	if len(f.servers) == 0 {
		return nil, errors.New("--etcd-servers is required")
	}
	cfg := clientv3.Config{Endpoints: f.servers, DialTimeout: 10 * time.Second, Logger: zap.NewNop()}
	if f.certFile != "" || f.caFile != "" {
		tls, err := transport.TLSInfo{CertFile: f.certFile, KeyFile: f.keyFile, TrustedCAFile: f.caFile}.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS files: %w", err)
		}
		cfg.TLS = tls
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd %v: %w", f.servers, err)
	}
	return c, nil
}

func (f *etcdFlags) context(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	return ctx, func() { cancel(); stop() }
}

// newBackupCommand is `convoy backup`: a backup of convoy's etcd prefix to a folder
// or an S3-compatible bucket (the chart's CronJob runs it).
func newBackupCommand() *cobra.Command {
	var (
		f      etcdFlags
		to     string
		retain int
	)
	cmd := &cobra.Command{
		Use:   "backup --to LOCATION",
		Short: "Back up convoy's objects from etcd to a folder or an S3-compatible bucket",
		Long: `backup reads every key under convoy's etcd prefix at one etcd revision (a
consistent state) through etcd's client API and writes it as one file,
convoy-<time>.backup.gz, to LOCATION: a folder (e.g. a PersistentVolumeClaim's) or
s3://bucket/prefix. It reads the file back to check it, then deletes all but the
newest --retain backups there. It exits non-zero unless the backup is whole.`,
		Example: `  convoy backup --etcd-servers=https://convoy-etcd-0.convoy-etcd.convoy-system.svc:2379 \
    --etcd-cafile=ca.crt --etcd-certfile=tls.crt --etcd-keyfile=tls.key --to /backups --retain=7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := f.context(cmd)
			defer cancel()
			st, name, err := backup.Open(to, f.s3)
			if err != nil {
				return err
			}
			if name != "" {
				return fmt.Errorf("--to %s: give a folder or s3://bucket/prefix, not a file: backups are named by their time", to)
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			now := time.Now()
			name = backup.Name(now)
			pr, pw := io.Pipe()
			saved := make(chan backup.Summary, 1)
			go func() {
				s, err := backup.Save(ctx, c, f.prefix, now, pw)
				saved <- s
				pw.CloseWithError(err)
			}()
			if err := st.Put(ctx, name, pr); err != nil {
				pr.CloseWithError(err)
				return fmt.Errorf("backing up to %s: %w", st, err)
			}
			s := <-saved
			// Read it back: only a whole file counts as a backup.
			r, err := st.Open(ctx, name)
			if err != nil {
				return err
			}
			_, t, err := backup.Read(r, nil)
			r.Close()
			if err != nil {
				return fmt.Errorf("the backup %s in %s does not read back: %w", name, st, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Backed up %d keys (%d bytes of objects) of %s at etcd revision %d to %s/%s\n",
				t.Keys, t.Bytes, s.Header.Prefix, s.Header.Revision, st, name)
			pruned, err := backup.Prune(ctx, st, retain)
			for _, p := range pruned {
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted the old backup %s/%s\n", st, p)
			}
			return err
		},
	}
	f.bind(cmd.Flags())
	cmd.Flags().StringVar(&to, "to", "", "where to write: a folder, or s3://bucket/prefix (required)")
	cmd.Flags().IntVar(&retain, "retain", 0, "keep this many newest backups at --to and delete older ones (0: keep all)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// newRestoreCommand is `convoy restore`: convoy's etcd prefix made what a backup holds.
func newRestoreCommand() *cobra.Command {
	var (
		f    etcdFlags
		from string
	)
	cmd := &cobra.Command{
		Use:   "restore --from LOCATION",
		Short: "Make convoy's objects in etcd those of a backup",
		Long: `restore reads a backup (LOCATION: a backup file, or a folder or s3://bucket/prefix
for the newest backup there), checks that it is whole, that it was taken of this
--etcd-prefix and that this convoy reads its objects' API versions, and only then
writes: every key of the backup is put and every other key under the prefix is
deleted, through etcd's client API, so convoy apiserver and its clients see the
restored objects as changes. Stop convoy's controller and observer first
(docs/operations.md, "Backup and restore").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := f.context(cmd)
			defer cancel()
			st, name, err := backup.Open(from, f.s3)
			if err != nil {
				return err
			}
			if name == "" {
				if name, err = backup.Latest(ctx, st); err != nil {
					return err
				}
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			defer c.Close()
			to := backup.Target{Prefix: f.prefix, Served: []string{convoyv1alpha1.SchemeGroupVersion.String()}}
			s, err := backup.Restore(ctx, c, to, func() (io.ReadCloser, error) { return st.Open(ctx, name) })
			if err != nil {
				return fmt.Errorf("restoring %s/%s: %w", st, name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Restored %d keys of %s from %s/%s (taken %s at etcd revision %d); deleted %d keys it did not have\n",
				s.Trailer.Keys, s.Header.Prefix, st, name, s.Header.Time.Format(time.RFC3339), s.Header.Revision, s.Deleted)
			return nil
		},
	}
	f.bind(cmd.Flags())
	cmd.Flags().StringVar(&from, "from", "", "the backup: a file, or a folder or s3://bucket/prefix for the newest there (required)")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}
