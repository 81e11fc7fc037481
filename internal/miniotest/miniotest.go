// Package miniotest runs a real MinIO server for tests: a `minio` binary on
// PATH or in $(go env GOPATH)/bin, bound to loopback on free ports, with a
// throwaway data directory and fixed root credentials.
//
// Install the binary with
//
//	go install github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
//
// Without it, tests that need MinIO are skipped, or fail when CI=true.
//
// It owns the server's process and data directory for the test binary's
// lifetime. Only tests import it (store's and catalog's, the gateway's,
// eval's). It
// uses the AWS SDK to create buckets and imports of skillgate only the
// leaf helpers gobin and syncbuf and testkit's process launcher (which
// natstest shares), so that r2store's own tests can use it without a
// cycle: the stores under test are built by the tests themselves.
package miniotest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/skillgate/skillgate/internal/testkit"
)

// Fixed root credentials of every server this package starts.
const (
	AccessKey = "skillgate-test"
	SecretKey = "skillgate-test-secret"
)

// InstallCommand installs the MinIO version the tests are run with.
const InstallCommand = "go install github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"

const (
	readyTimeout = 30 * time.Second // from process start to /minio/health/ready
	stopTimeout  = 10 * time.Second // from SIGTERM to SIGKILL
	outputLimit  = 1 << 20          // bytes of MinIO output kept
)

// ErrNoBinary is returned by Launch when no minio binary is found.
var ErrNoBinary = errors.New("minio binary not found on PATH or in $(go env GOPATH)/bin; install it with: " + InstallCommand)

// Server is a running (or stopped) MinIO server.
type Server struct {
	// Endpoint is the S3 API's base URL, e.g. "http://127.0.0.1:40123".
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string

	bin, dataDir, certsDir string
	addr, consoleAddr      string
	daemon                 *testkit.Daemon // holds dataDir and certsDir
	closeOnce              sync.Once
	clientOnce             sync.Once
	client                 *s3.Client
}

// Start launches a MinIO server for t and stops it when t ends. When the
// binary is missing it skips t, or fails it when CI=true. When t fails,
// MinIO's output is logged.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch()
	if err != nil {
		testkit.SkipOrFatal(t, err, ErrNoBinary)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("minio output:\n%s", s.Output())
		}
		s.Close()
	})
	return s
}

// Launch starts a MinIO server and waits until it is ready. The caller must
// Close it. It returns ErrNoBinary when minio is not installed.
func Launch() (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	d, err := testkit.NewDaemon("miniotest-", outputLimit)
	if err != nil {
		return nil, fmt.Errorf("miniotest: %w", err)
	}
	s := &Server{
		AccessKey: AccessKey,
		SecretKey: SecretKey,
		bin:       bin,
		dataDir:   filepath.Join(d.Dir, "data"),
		certsDir:  filepath.Join(d.Dir, "certs"),
		daemon:    d,
	}
	if err := d.Launch("minio", 2, func(ports []int) error {
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		s.consoleAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
		s.Endpoint = "http://" + s.addr
		return s.start()
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// findBinary finds the minio binary, or ErrNoBinary.
func findBinary() (string, error) { return testkit.FindProgram("minio", ErrNoBinary) }

// start runs the minio process and waits for readiness.
func (s *Server) start() error {
	cmd := exec.Command(s.bin, "server", s.dataDir,
		"--address", s.addr, "--console-address", s.consoleAddr,
		"--certs-dir", s.certsDir, "--quiet")
	cmd.Env = append(withoutMinioEnv(os.Environ()),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	return s.daemon.Start(cmd, "miniotest: "+s.Endpoint, readyTimeout, 50*time.Millisecond, s.ready)
}

// withoutMinioEnv drops MINIO_* variables the developer may have set, so
// the server's configuration is exactly this package's.
func withoutMinioEnv(env []string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "MINIO_") {
			kept = append(kept, kv)
		}
	}
	return kept
}

// ready reports whether MinIO answers /minio/health/ready with 200.
func (s *Server) ready() error {
	client := &http.Client{Timeout: time.Second}
	resp, err := client.Get(s.Endpoint + "/minio/health/ready")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and keeps its
// data. Requests fail until Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() { s.daemon.Stop(syscall.SIGTERM, stopTimeout) }

// Restart stops the server if it runs and starts it again on the same
// address with the same data, for tests of storage outages.
func (s *Server) Restart() error {
	s.Stop()
	if err := s.start(); err != nil {
		return fmt.Errorf("%w\nminio output:\n%s", err, s.Output())
	}
	return nil
}

// Close stops the server and removes its data directory.
func (s *Server) Close() { s.closeOnce.Do(func() { s.daemon.Close(syscall.SIGTERM, stopTimeout) }) }

// Output returns what MinIO printed so far (the last 1 MiB).
func (s *Server) Output() string { return s.daemon.Output() }

// Env returns the environment variables that make the standard AWS chain
// use this server's credentials, for tests that run a binary.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// StoreURL returns the --store value of a bucket on this server.
func (s *Server) StoreURL(bucket string) string {
	return "s3://" + bucket + "?endpoint=" + s.Endpoint
}

// Client returns an S3 client of this server with the root credentials.
func (s *Server) Client() *s3.Client {
	s.clientOnce.Do(func() {
		s.client = s3.New(s3.Options{
			BaseEndpoint: aws.String(s.Endpoint),
			Region:       "us-east-1",
			UsePathStyle: true,
			Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		})
	})
	return s.client
}

// CreateBucket makes a bucket.
func (s *Server) CreateBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		return fmt.Errorf("miniotest: create bucket %s: %w", name, err)
	}
	return nil
}

// Bucket makes a bucket for t with a unique name derived from t.Name() and
// returns the name.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	name := bucketName(t.Name())
	if err := s.CreateBucket(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

// bucketName turns a test name into a valid, unique S3 bucket name:
// lowercase letters, digits and hyphens, 3 to 63 characters.
func bucketName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 40 {
		name = strings.Trim(name[:40], "-")
	}
	return fmt.Sprintf("t-%s-%08x", name, rand.Uint32())
}

// Once starts one server lazily and shares it among a package's tests:
//
//	var minio miniotest.Once
//
//	func TestMain(m *testing.M) { os.Exit(minio.Run(m)) }
//
//	func TestX(t *testing.T) { srv := minio.Get(t); … }
type Once struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get returns the shared server, starting it on first use. When the binary
// is missing it skips t, or fails it when CI=true. When t fails, MinIO's
// recent output is logged.
func (o *Once) Get(t testing.TB) *Server {
	t.Helper()
	o.once.Do(func() { o.srv, o.err = Launch() })
	if o.err != nil {
		testkit.SkipOrFatal(t, o.err, ErrNoBinary)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("minio output:\n%s", testkit.Tail(o.srv.Output(), 8<<10))
		}
	})
	return o.srv
}

// Close stops the shared server, if it was started.
func (o *Once) Close() {
	o.once.Do(func() {}) // no start after Close
	if o.srv != nil {
		o.srv.Close()
	}
}

// Run runs the package's tests and then closes the shared server, for a
// TestMain: os.Exit(minio.Run(m)).
func (o *Once) Run(m *testing.M) int {
	defer o.Close()
	return m.Run()
}
