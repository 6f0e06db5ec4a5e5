package world

// WithoutResends makes the backend of a run never ask for a resend: the
// checks must then find what a broker restart lost.
func WithoutResends(o Options) Options {
	o.noResends = true
	return o
}
