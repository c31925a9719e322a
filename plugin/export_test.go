package plugin

// StreamsOpened is how many ExecuteStream streams the process running t has opened, and how
// many of them wait for a call; -1, -1 when no process runs t.
func StreamsOpened(m *Manager, t Target) (opened, idle int) {
	m.mu.Lock()
	p := m.procs[t.key()]
	m.mu.Unlock()
	if p == nil {
		return -1, -1
	}
	p.streams.mu.Lock()
	defer p.streams.mu.Unlock()
	return p.streams.opened, len(p.streams.idle)
}
