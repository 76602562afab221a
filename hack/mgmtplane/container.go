/*
Copyright 2026 The capo-multiaz Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/ociarchive"
)

// serviceAccountDir is where Kubernetes mounts a pod's service account token, CA and namespace;
// client-go's in-cluster configuration and controller-runtime's leader election read them there.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// providerPorts are the ports the provider's manager listens on, on the host's network.
type providerPorts struct{ webhook, health, diagnostics int }

// providerContainers prepares runc bundles that run the provider's manager from its image as the
// release's Deployment runs it in a pod, one per replica (ports has one entry per replica): its
// command and arguments (with the listening addresses moved to 127.0.0.1 and free ports, which a
// shared host network needs), its user, no capabilities, a read-only root, its ServiceAccount's
// token and the webhook certificate mounted where the Deployment mounts them, the API server as
// the in-cluster address, and a host name per replica as a pod's name would be. The replicas
// share one unpacked root file system. It returns the processes that run the containers.
func providerContainers(ctx context.Context, cl client.Client, cfg *rest.Config, comps *components, image, dir, certs string,
	ports []providerPorts, extraArgs []string) ([]*process, error) {
	bundle := filepath.Join(dir, "provider")
	if err := os.RemoveAll(bundle); err != nil {
		return nil, err
	}
	img, err := ociarchive.Read(image)
	if err != nil {
		return nil, err
	}
	rootfs, err := filepath.Abs(filepath.Join(bundle, "rootfs"))
	if err != nil {
		return nil, err
	}
	if err := img.Unpack(rootfs); err != nil {
		return nil, fmt.Errorf("unpacking %s: %w", image, err)
	}
	c := comps.deployment.Spec.Template.Spec.Containers[0]
	uid, gid := int64(65532), int64(65532)
	if sc := c.SecurityContext; sc != nil {
		uid, gid = ptr.Deref(sc.RunAsUser, uid), ptr.Deref(sc.RunAsGroup, gid)
	}
	mounts, err := podMounts(ctx, cl, cfg, comps, bundle, rootfs, certs, int(uid), int(gid))
	if err != nil {
		return nil, err
	}
	command := append(append([]string{}, c.Command...), c.Args...)
	if len(c.Command) == 0 {
		command = append(append([]string{}, img.Config.Entrypoint...), c.Args...)
	}
	server, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	env := append([]string{}, img.Config.Env...)
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	env = append(env, "KUBERNETES_SERVICE_HOST="+server.Hostname(), "KUBERNETES_SERVICE_PORT="+server.Port())
	runc, err := exec.LookPath("runc")
	if err != nil {
		return nil, fmt.Errorf("runc is needed to run the provider's image (apt-get install runc): %w", err)
	}
	var replicas []*process
	for i, p := range ports {
		args := setFlag(append([]string{}, command...), "--health-addr", fmt.Sprintf("127.0.0.1:%d", p.health))
		args = setFlag(args, "--webhook-port", strconv.Itoa(p.webhook))
		args = setFlag(args, "--webhook-host", "127.0.0.1")
		args = setFlag(args, "--diagnostics-address", fmt.Sprintf("127.0.0.1:%d", p.diagnostics))
		replicaBundle := filepath.Join(bundle, fmt.Sprintf("replica-%d", i))
		spec := containerSpec(append(args, extraArgs...), env, uid, gid, rootfs, fmt.Sprintf("capo-controller-manager-%d", i), mounts)
		if err := writeBundle(replicaBundle, spec); err != nil {
			return nil, err
		}
		root := filepath.Join(dir, "runc")
		id := fmt.Sprintf("capo-controller-manager-%d-%d", os.Getpid(), i)
		replicas = append(replicas, &process{
			name: replicaName(i), binary: runc, health: p.health,
			args: []string{"--root", root, "run", "--bundle", replicaBundle, id},
			// The manager is the container's first process: runc forwards SIGTERM to it, but a
			// SIGKILL must go to the container itself, and a container whose runc was killed
			// would outlive it.
			killer:  func() error { return exec.Command(runc, "--root", root, "kill", id, "KILL").Run() },
			cleanup: func() { _ = exec.Command(runc, "--root", root, "delete", "--force", id).Run() },
		})
	}
	return replicas, nil
}

// podMounts are the mounts of the provider's pod: a container's own, its ServiceAccount and
// the webhook certificate, read-only as in the pod, readable by the manager's user (uid, gid).
// Their mount points are made in rootfs.
func podMounts(ctx context.Context, cl client.Client, cfg *rest.Config, comps *components, bundle, rootfs, certs string, uid, gid int) ([]map[string]any, error) {
	pod := comps.deployment.Spec.Template.Spec
	saDir := filepath.Join(bundle, "serviceaccount")
	if err := writeServiceAccount(ctx, cl, cfg, comps.deployment.Namespace, pod.ServiceAccountName, saDir); err != nil {
		return nil, err
	}
	mounts := []map[string]any{
		{"destination": "/proc", "type": "proc", "source": "proc"},
		{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": []string{"nosuid", "noexec", "nodev", "ro"}},
		{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=1777"}},
		{"destination": serviceAccountDir, "type": "bind", "source": saDir, "options": []string{"rbind", "ro"}},
	}
	for _, vm := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.Secret != nil {
				// The webhook certificate's Secret, which cert-manager fills in a cluster: a copy
				// the manager's user may read.
				secretDir := filepath.Join(bundle, "secret-"+v.Name)
				if err := copyForUser(certs, secretDir, uid, gid); err != nil {
					return nil, err
				}
				mounts = append(mounts, map[string]any{"destination": vm.MountPath, "type": "bind", "source": secretDir, "options": []string{"rbind", "ro"}})
			}
		}
	}
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Join(rootfs, m["destination"].(string)), 0o755); err != nil {
			return nil, err
		}
	}
	return mounts, nil
}

// containerSpec is the runc configuration of one replica: the Deployment's process, user and
// mounts, no capabilities, a read-only root, and its own host name.
func containerSpec(args, env []string, uid, gid int64, rootfs, hostname string, mounts []map[string]any) map[string]any {
	return map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"terminal": false, "user": map[string]any{"uid": uid, "gid": gid},
			"args": args, "env": env, "cwd": "/",
			// The Deployment drops every capability and forbids privilege escalation.
			"capabilities":    map[string]any{"bounding": []string{}, "effective": []string{}, "permitted": []string{}, "ambient": []string{}},
			"noNewPrivileges": true,
		},
		"root": map[string]any{"path": rootfs, "readonly": true},
		// A pod's host name is its name; leader election names the holder after it.
		"hostname": hostname,
		"mounts":   mounts,
		"linux": map[string]any{
			// No network namespace: the host's network, where the API server and the webhook
			// clients are, on 127.0.0.1.
			"namespaces":    []map[string]any{{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}},
			"maskedPaths":   []string{"/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware"},
			"readonlyPaths": []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
		},
	}
}

// writeBundle writes a runc bundle's configuration.
func writeBundle(dir string, spec map[string]any) error {
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600)
}

// replicaName is the name of the provider's replica i among the plane's managers (and its log's).
func replicaName(i int) string {
	if i == 0 {
		return "provider-manager"
	}
	return fmt.Sprintf("provider-manager-%d", i)
}

// setFlag sets --name to value in args, replacing a --name=... or --name ... already there.
func setFlag(args []string, name, value string) []string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			args[i+1] = value
			return args
		}
		if strings.HasPrefix(a, name+"=") {
			args[i] = name + "=" + value
			return args
		}
	}
	return append(args, name+"="+value)
}

// writeServiceAccount writes what Kubernetes mounts into a pod for its ServiceAccount: a token
// (asked of the API server's TokenRequest API, as the kubelet does), the API server's CA and the
// namespace.
func writeServiceAccount(ctx context.Context, cl client.Client, cfg *rest.Config, namespace, name, dir string) error {
	if name == "" {
		name = "default"
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(7 * 24 * 3600))}}
	if err := cl.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for file, data := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": cfg.CAData, "namespace": []byte(namespace)} {
		// Readable by the manager's user, as the kubelet's projected volume is.
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyForUser copies the files of src into dst, owned by uid:gid and readable by them only.
func copyForUser(src, dst string, uid, gid int) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		path := filepath.Join(dst, e.Name())
		if err := os.WriteFile(path, data, 0o400); err != nil {
			return err
		}
		if err := os.Chown(path, uid, gid); err != nil {
			return err
		}
	}
	return nil
}
