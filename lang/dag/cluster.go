package dag

// cluster is the set of nodes drawn inside one box of a picture.
type cluster struct {
	name  string
	nodes []int
}

// clusters splits the nodes for drawing: those outside any cluster, in
// insertion order, and the clusters in order of their first member, each
// listing its members in insertion order. Both picture formats share this so
// that DOT and Mermaid renderings of one graph group nodes identically.
func (g *Graph) clusters() (top []int, groups []cluster) {
	var byName map[string]int
	for v, a := range g.attrs {
		if a.Cluster == "" {
			top = append(top, v)
			continue
		}
		if byName == nil {
			byName = make(map[string]int)
		}
		k, ok := byName[a.Cluster]
		if !ok {
			k = len(groups)
			byName[a.Cluster] = k
			groups = append(groups, cluster{name: a.Cluster})
		}
		groups[k].nodes = append(groups[k].nodes, v)
	}
	return top, groups
}
