// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to dir and returns the certificate's pool.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "hwpprobe-test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	writeFile(t, filepath.Join(dir, "cert.pem"), string(certPEM), 0o644)
	writeFile(t, filepath.Join(dir, "key.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})), 0o644)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return pool
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// webConfigDir returns a directory that the exporter can still read
// after it switches to nobody, holding a self-signed certificate and a
// web config with TLS and basic auth for user "prom", password "secret".
func webConfigDir(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n",
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), hash)
	writeFile(t, filepath.Join(dir, "web.yml"), cfg, 0o644)
	return dir, pool
}

// get fetches url with client, as user:password when user is set, and
// returns the status code and body.
func get(ctx context.Context, client *http.Client, url, user, password string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, string(b), err
}

// TestExporterWebConfig runs the exporter on this machine with a web
// config file (TLS, basic auth) and the default --user nobody: https
// with the right password gets /metrics, a wrong or no password gets 401,
// and plain http gets no metrics.
func TestExporterWebConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir, pool := webConfigDir(t)
	_, addr, log := startExporter(t, ctx, "--msr", "0x6e0", "--web.config.file", filepath.Join(dir, "web.yml"))
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "serving https://") {
		t.Errorf("start-up log does not say https:\n%s", b)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	tests := []struct {
		name, user, password string
		want                 int
	}{
		{"right password", "prom", "secret", http.StatusOK},
		{"wrong password", "prom", "wrong", http.StatusUnauthorized},
		{"unknown user", "root", "secret", http.StatusUnauthorized},
		{"no password", "", "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		code, body, err := get(ctx, client, "https://"+addr+"/metrics", tt.user, tt.password)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, code, tt.want)
		}
		if got := strings.Contains(body, "\nhwpprobe_"); got != (tt.want == http.StatusOK) {
			t.Errorf("%s: body has metrics = %v, want %v", tt.name, got, tt.want == http.StatusOK)
		}
	}
	code, body, err := get(ctx, &http.Client{}, "http://"+addr+"/metrics", "prom", "secret")
	if err == nil && (code == http.StatusOK || strings.Contains(body, "hwpprobe_")) {
		t.Errorf("plain http: status %d, body %.200q; want no metrics", code, body)
	}
}

// TestExporterWebConfigUnreadable: a web config that --user cannot read
// (it is read again on every connection) is refused at start with one
// error line (after the start-up lines), before serving anything.
func TestExporterWebConfigUnreadable(t *testing.T) {
	dir, _ := webConfigDir(t)
	cfg := filepath.Join(dir, "web.yml")
	if err := os.Chmod(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unreadable by nobody", []string{"--web.config.file", cfg}, "as --user nobody"},
		{"missing", []string{"--web.config.file", filepath.Join(dir, "none.yml")}, "web config"},
	}
	for _, tt := range tests {
		_, stderr, code := runBin(t, append([]string{"exporter", "--listen", "127.0.0.1:0"}, tt.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 2 || strings.Count(stderr, "hwpprobe: ") != 1 || !strings.HasPrefix(last, "hwpprobe: ") || !strings.Contains(last, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one error line with %q", tt.name, code, stderr, tt.want)
		}
	}
}
