package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the certificate authorities and key pairs of one control plane,
// as files under dir (so a state folder can be reused by `convoy dev`).
type pki struct {
	dir string

	ca, frontProxyCA *keyPair
}

type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// File names under the pki folder.
const (
	caName            = "ca"
	frontProxyCAName  = "front-proxy-ca"
	servingName       = "apiserver"
	adminName         = "admin"
	frontProxyClient  = "front-proxy-client"
	serviceAccountKey = "sa"
)

// loadOrCreatePKI reuses the PKI under dir when it is complete, or makes one.
func loadOrCreatePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{dir: dir}
	var err error
	if p.ca, err = p.loadOrCreateCA(caName, "convoy-localcluster-ca"); err != nil {
		return nil, err
	}
	if p.frontProxyCA, err = p.loadOrCreateCA(frontProxyCAName, "convoy-localcluster-front-proxy-ca"); err != nil {
		return nil, err
	}
	if !exists(p.path(servingName + ".crt")) {
		serving, err := issue(p.ca, "kube-apiserver", nil, true)
		if err != nil {
			return nil, err
		}
		if err := p.write(servingName, serving); err != nil {
			return nil, err
		}
	}
	if !exists(p.path(frontProxyClient + ".crt")) {
		fp, err := issue(p.frontProxyCA, frontProxyClient, nil, false)
		if err != nil {
			return nil, err
		}
		if err := p.write(frontProxyClient, fp); err != nil {
			return nil, err
		}
	}
	if !exists(p.path(adminName + ".crt")) {
		admin, err := issue(p.ca, "convoy-admin", []string{"system:masters"}, false)
		if err != nil {
			return nil, err
		}
		if err := p.write(adminName, admin); err != nil {
			return nil, err
		}
	}
	if !exists(p.path(serviceAccountKey + ".key")) {
		if err := p.writeServiceAccountKey(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// clientCert issues a client certificate of the cluster CA for user in groups.
func (p *pki) clientCert(user string, groups []string) (*keyPair, error) {
	return issue(p.ca, user, groups, false)
}

func (p *pki) loadOrCreateCA(name, cn string) (*keyPair, error) {
	if exists(p.path(name + ".crt")) {
		return readKeyPair(p.path(name+".crt"), p.path(name+".key"))
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	kp, err := sign(tmpl, tmpl, key, key)
	if err != nil {
		return nil, err
	}
	return kp, p.write(name, kp)
}

// issue signs a leaf certificate with ca: a serving certificate for
// localhost and the in-cluster names of the API server, or a client
// certificate for the user cn in the groups.
func issue(ca *keyPair, cn string, groups []string, serving bool) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: groups},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if serving {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")}
	}
	return sign(tmpl, ca.cert, key, ca.key)
}

func sign(tmpl, parent *x509.Certificate, key crypto.Signer, parentKey crypto.Signer) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func (p *pki) write(name string, kp *keyPair) error {
	if err := os.WriteFile(p.path(name+".key"), kp.keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.path(name+".crt"), kp.certPEM, 0o644)
}

func (p *pki) writeServiceAccountKey() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(p.path(serviceAccountKey+".key"), keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.path(serviceAccountKey+".pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func readKeyPair(certFile, keyFile string) (*keyPair, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s or %s is not PEM", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New(keyFile + " holds no signing key")
	}
	return &keyPair{cert: cert, key: signer, certPEM: certPEM, keyPEM: keyPEM}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
