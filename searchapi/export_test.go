package searchapi

// HoldSlots takes every slot queries are searched in (cpuSlots) until
// the returned func is called, so tests can see requests wait for one.
func (s *Service) HoldSlots() (release func()) {
	for range cap(s.cpu) {
		s.cpu <- struct{}{}
	}
	return func() {
		for range cap(s.cpu) {
			<-s.cpu
		}
	}
}
