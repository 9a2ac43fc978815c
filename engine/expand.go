package engine

// Expander looks up the value of ${NAME}; ok is false when NAME is not defined.
type Expander func(name string) (value string, ok bool)
