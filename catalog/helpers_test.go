package catalog_test

import (
	"os"
	"testing"

	"github.com/skillgate/skillgate/internal/miniotest"
)

// minio is the MinIO server the package's tests share.
var minio miniotest.Once

func TestMain(m *testing.M) { os.Exit(minio.Run(m)) }
