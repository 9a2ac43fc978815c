package store

import "github.com/speedmatrix/speedmatrix/internal/usage"

// CheckKind returns a usage error unless kind is a kind of stored result ("" too when
// empty is allowed, as store list's no filter): a mistyped --kind must not list nothing.
func CheckKind(kind string, emptyOK bool) error {
	switch Kind(kind) {
	case KindDefault, KindPR, KindAA, KindBisect:
		return nil
	case "":
		if emptyOK {
			return nil
		}
	}
	return usage.Errorf("--kind %q: want default-branch, pr, aa or bisect", kind)
}
