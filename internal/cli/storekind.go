package cli

import "github.com/speedmatrix/speedmatrix/store"

// checkStoreKind returns a usage error unless kind is a kind of stored result ("" too when
// empty is allowed, as store list's no filter): a mistyped --kind must not list nothing.
func checkStoreKind(kind string, emptyOK bool) error {
	switch store.Kind(kind) {
	case store.KindDefault, store.KindPR, store.KindAA, store.KindBisect:
		return nil
	case "":
		if emptyOK {
			return nil
		}
	}
	return usagef("--kind %q: want default-branch, pr, aa or bisect", kind)
}
