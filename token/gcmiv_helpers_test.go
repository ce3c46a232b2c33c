package token

// reset forgets every key's window.
func (w *gcmIVs) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keys.Range(func(k, v any) bool {
		r := v.(*ivRing)
		r.mu.Lock()
		r.dead = true
		r.mu.Unlock()
		w.keys.Delete(k)
		return true
	})
	w.n = 0
}

// held is the number of IVs remembered for key.
func (w *gcmIVs) held(key gcmKeyID) int {
	v, ok := w.keys.Load(key)
	if !ok {
		return 0
	}
	r := v.(*ivRing)
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}
