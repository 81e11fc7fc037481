package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
)

// replicaPermissions is the NATS permissions block docs/deploy-cluster.md
// gives the replicas: from its line "REPLICA = {" to the next line "}".
func replicaPermissions(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/deploy-cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\nREPLICA = {\n")
	if i < 0 {
		t.Fatal(`docs/deploy-cluster.md has no line "REPLICA = {"`)
	}
	j := strings.Index(doc[i+1:], "\n}\n")
	if j < 0 {
		t.Fatal(`docs/deploy-cluster.md: "REPLICA = {" is not closed by a line "}"`)
	}
	return doc[i+1 : i+1+j+2]
}

// TestLeastPrivilege: replicas logged in with only the permissions
// docs/deploy-cluster.md gives them (in an account of their own) create
// the bucket, share their nodes, withdraw them, and follow the bucket when
// an administrator deletes it; NATS reports no permission violation. The
// permissions do not let a replica delete or purge the bucket.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte(replicaPermissions(t)+`
accounts {
  SKILLGATE {
    jetstream: enabled
    users: [
      { user: gateway, password: gateway-password, permissions: $REPLICA }
      { user: admin, password: admin-password }
    ]
  }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := natstest.Start(t, "-c", conf)
	cfg := func(replica string) Config {
		return Config{Replica: replica, TTL: testTTL, Bucket: DefaultBucket, User: "gateway", Password: "gateway-password"}
	}
	a, _, _ := joinWith(t, srv, cfg("a"))
	b, hb, _ := joinWith(t, srv, cfg("b"))
	waitConnected(t, a, b)
	r := testRecord("n1", time.Now())
	a.Publish(r)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	js := func(user, password string) jetstream.JetStream {
		return srv.JetStream(t, nats.UserInfo(user, password))
	}
	// Someone writes over n1: a reads the key, and writes n1 back.
	admin := js("admin", "admin-password")
	kv, err := admin.KeyValue(t.Context(), DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), "n1", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	testkit.Until(t, 5*time.Second, "a writes n1 back", func() bool {
		e, err := kv.Get(t.Context(), "n1")
		return err == nil && string(e.Value()) != "garbage"
	})
	a.Withdraw("n1", r.ConnectedAt)
	testkit.Until(t, 5*time.Second, "b sees n1 go", func() bool { return hb.get("n1") == nil })

	// A replica may not delete the bucket; an administrator may.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if err := js("gateway", "gateway-password").DeleteKeyValue(ctx, DefaultBucket); err == nil {
		t.Error("a replica's login deleted the bucket")
	}
	violations := strings.Count(srv.Output(), "Violation")
	if err := admin.DeleteKeyValue(t.Context(), DefaultBucket); err != nil {
		t.Fatal(err)
	}
	r2 := testRecord("n2", time.Now())
	a.Publish(r2)
	testkit.Until(t, 5*testTTL, "b sees n2 in the bucket made again", func() bool { return hb.get("n2") != nil })
	waitConnected(t, a, b)
	a.Withdraw("n2", r2.ConnectedAt)
	testkit.Until(t, 5*time.Second, "b sees n2 go", func() bool { return hb.get("n2") == nil })
	if n := strings.Count(srv.Output(), "Violation"); n != violations || violations != 1 {
		t.Errorf("NATS reported %d permission violations, want only the delete refused:\n%s", n, srv.Output())
	}
}
