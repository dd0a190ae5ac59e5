// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWebTLS reads exporter-toolkit web config files (the format of
// prometheus/exporter-toolkit's docs/web-configuration.md) with the
// project's one YAML library: TLS is on exactly when tls_server_config
// names a certificate.
func TestWebTLS(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		want    bool
		wantErr bool
	}{
		{"tls", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n", true, false},
		{"tls and basic auth", "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\nbasic_auth_users:\n  prom: $2y$10$abc\n", true, false},
		{"basic auth only", "basic_auth_users:\n  prom: $2y$10$abc\n", false, false},
		{"empty", "", false, false},
		{"not yaml", "tls_server_config: [\n", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "web.yml")
			if err := os.WriteFile(p, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := webTLS(p)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("webTLS: %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrWebConfig) {
				t.Errorf("error %v does not wrap ErrWebConfig", err)
			}
		})
	}
}
