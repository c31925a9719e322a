package jsstore

import "github.com/nats-io/nats.go/jetstream"

// KVConfig returns the configuration of the host KV bucket name with replicas copies: file
// storage, one value per key.
func KVConfig(name string, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      name,
		Description: "fuscia: host key-value state of components and plugins, sealed with the cluster key",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}

// ArtifactsConfig returns the configuration of the artifacts object store name with replicas
// copies, on file storage.
func ArtifactsConfig(name string, replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket:      name,
		Description: "fuscia: artifacts of executions, sealed with the cluster key",
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}
