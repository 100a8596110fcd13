package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

// The front-end's build output (web/, `make ui`), committed so that `go build`
// needs no Node.js.
//
//go:generate sh -c "cd web && npm ci --no-audit --no-fund && npm run build"
//go:embed dist
var dist embed.FS

// assets serves dist/: index.html for / and every page route (the page routes
// with the URL's fragment), the bundle under /assets/.
func assets() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
