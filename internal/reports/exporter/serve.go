// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/exporter-toolkit/web"
	"gopkg.in/yaml.v3"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// Errors Run returns (wrapped).
var (
	// ErrNotRoot: the exporter must start as root to open the register
	// devices and load the eBPF program.
	ErrNotRoot = errors.New("must start as root to open the register devices and load the eBPF program (it then drops to --user)")
	// ErrBadUser: the --user account does not exist.
	ErrBadUser = errors.New("unknown user")
	// ErrNotDir: the --textfile directory does not exist or is not a
	// directory.
	ErrNotDir = errors.New("not a directory")
	// ErrWebConfig: the --web.config.file, or a certificate it names, is
	// unreadable or invalid (as root at start, or as --user after the
	// switch: it is read again on every connection).
	ErrWebConfig = errors.New("bad web config file")
)

// TextfileName is the file --textfile writes in its directory.
const TextfileName = "hwpprobe.prom"

// Options configure Run.
type Options struct {
	Config
	// Listen is the address to serve GET /metrics on ("" serves nothing).
	Listen string
	// WebConfigFile, when set, is an exporter-toolkit web configuration
	// (TLS, basic auth) for the listener, as node_exporter's
	// --web.config.file.
	WebConfigFile string
	// TextfileDir, when set, is a directory where the metrics are written
	// atomically every TextfileInterval, for node_exporter's textfile
	// collector.
	TextfileDir      string
	TextfileInterval time.Duration
	// User is the account to switch to once everything is open ("root"
	// keeps root).
	User string
	// Log receives the start-up lines: what is missing, where it serves.
	Log io.Writer
}

// Run opens the sources, drops root to o.User, and serves and/or writes
// the metrics until ctx is done or a stop signal (cli.StopSignals)
// arrives.
func Run(ctx context.Context, o Options) error {
	ctx, stop := sigquit.NotifyContext(ctx, cli.StopSignals...)
	defer stop()
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	uid, gid, err := lookupUser(o.User)
	if err != nil {
		return err
	}
	if o.TextfileDir != "" {
		if st, err := os.Stat(o.TextfileDir); err != nil || !st.IsDir() {
			return fmt.Errorf("--textfile %s: %w", o.TextfileDir, ErrNotDir)
		}
	}
	if err := checkWebConfig(o.WebConfigFile); err != nil {
		return err
	}
	var ln net.Listener
	if o.Listen != "" {
		if ln, err = net.Listen("tcp", o.Listen); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		defer ln.Close()
	}
	c, err := Open(o.Config)
	if err != nil {
		return err
	}
	defer c.Close()
	if e := c.Emulated(); e != "" {
		fmt.Fprintf(o.Log, "hwpprobe exporter: EMULATED machine %q: every figure comes from hwpemu\n", e)
	}
	for _, n := range c.Notes() {
		fmt.Fprintf(o.Log, "hwpprobe exporter: missing %s\n", n)
	}
	if uid != 0 {
		if err := dropPrivileges(uid, gid); err != nil {
			return err
		}
		if err := checkWebConfig(o.WebConfigFile); err != nil {
			return fmt.Errorf("as --user %s: %w", o.User, err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	errc := make(chan error, 2)
	if ln != nil {
		scheme := "http"
		if tls, _ := webTLS(o.WebConfigFile); tls {
			scheme = "https"
		}
		fmt.Fprintf(o.Log, "hwpprobe exporter: serving %s://%s/metrics as %s\n", scheme, ln.Addr(), o.User)
		go func() { errc <- serve(ctx, ln, reg, o.WebConfigFile, o.Log) }()
	}
	if o.TextfileDir != "" {
		go func() { errc <- writeTextfiles(ctx, reg, o.TextfileDir, o.TextfileInterval) }()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

// lookupUser resolves the account to run as.
func lookupUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("--user %s: %w", name, ErrBadUser)
	}
	if uid, err = strconv.Atoi(u.Uid); err == nil {
		gid, err = strconv.Atoi(u.Gid)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("--user %s: %w: %w", name, ErrBadUser, err)
	}
	return uid, gid, nil
}

// dropPrivileges switches every thread of the process to uid and gid with
// no supplementary groups; the open devices and BPF objects stay usable.
func dropPrivileges(uid, gid int) error {
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop privileges: setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("drop privileges: setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("drop privileges: setuid %d: %w", uid, err)
	}
	if os.Geteuid() != uid || os.Getegid() != gid {
		return fmt.Errorf("drop privileges: still uid %d gid %d", os.Geteuid(), os.Getegid())
	}
	return nil
}

// Handler serves GET (and HEAD) /metrics from reg, in the text format or
// OpenMetrics as the scraper asks; every other path is 404 and every
// other method 405.
func Handler(reg *prometheus.Registry) http.Handler {
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics:   true,
		MaxRequestsInFlight: 32,
		Timeout:             30 * time.Second,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	return mux
}

// checkWebConfig reads the web config file and the certificates it names
// (nothing to check without one).
func checkWebConfig(path string) error {
	if err := web.Validate(path); err != nil {
		return fmt.Errorf("--web.config.file %s: %w: %w", path, ErrWebConfig, err)
	}
	return nil
}

// webTLS reports whether the web config file at path turns TLS on.
func webTLS(path string) (bool, error) {
	if path == "" {
		return false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("--web.config.file: %w", err)
	}
	var c web.Config
	if err := yaml.Unmarshal(b, &c); err != nil {
		return false, fmt.Errorf("--web.config.file %s: %w: %w", path, ErrWebConfig, err)
	}
	return c.TLSConfig.IsEnabled(), nil
}

// serve runs the HTTP server on ln until ctx is done, with TLS and basic
// auth as the exporter-toolkit web config file webConfig says (plain HTTP
// without one); the toolkit's warnings go to log. Each connection has its
// own goroutine and deadlines, so a slow or hung scraper holds only its
// own connection.
func serve(ctx context.Context, ln net.Listener, reg *prometheus.Registry, webConfig string, log io.Writer) error {
	srv := &http.Server{
		Handler:           Handler(reg),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	noSystemd := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{}, WebSystemdSocket: &noSystemd, WebConfigFile: &webConfig}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := web.Serve(ln, srv, flags, logger); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// writeTextfiles writes the metrics to dir/TextfileName at once and then
// every interval until ctx is done.
func writeTextfiles(ctx context.Context, g prometheus.Gatherer, dir string, every time.Duration) error {
	if every <= 0 {
		every = 15 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := WriteTextfile(g, filepath.Join(dir, TextfileName)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// WriteTextfile writes g's metrics in the text format to path, replacing
// it atomically: readers see the old file or the complete new one.
func WriteTextfile(g prometheus.Gatherer, path string) error {
	mfs, err := g.Gather()
	if err != nil {
		return fmt.Errorf("textfile: gather: %w", err)
	}
	f, err := atomicfile.Create(path, atomicfile.Options{Replace: true})
	if err != nil {
		return fmt.Errorf("textfile: %w", err)
	}
	enc := expfmt.NewEncoder(f, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err = enc.Encode(mf); err != nil {
			break
		}
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("textfile: %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("textfile: %w", err)
	}
	return nil
}
