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

// Package report is how the services tell the user what they did and what is wrong: one error
// type for a spec the cloud refutes, and one recorder for the changes they make in the cloud.
// Controllers build a Recorder per reconcile, with the object the events are recorded on, and
// hand it to every service.
package report

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
)

// SpecError is a problem with the spec that only the cloud reveals: a filter that matches no
// resource or several, a subnet that is not on the load balancer network, a flavor that does not
// exist. Reason is the condition reason to report it under; Message names the field and the value.
// Retrying does not help until the spec or the cloud changes.
type SpecError struct {
	Reason string
	// Field is the path of the spec field whose value the cloud refutes, as Refuted spells it;
	// empty when the problem is not one field's.
	Field   string
	Message string
}

func (e *SpecError) Error() string { return e.Message }

// Refuted is the SpecError for a value of the field at path that the cloud refutes. Its message
// is the field's path as Kubernetes spells it in admission errors
// ("spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet.id"), a colon, and what is
// wrong. Every message that names a field is made here, so that a field has one spelling
// whichever check finds the problem; context such as an availability zone goes beside the path,
// never inside it.
func Refuted(reason string, path *field.Path, format string, args ...any) *SpecError {
	return &SpecError{Reason: reason, Field: path.String(), Message: path.String() + ": " + fmt.Sprintf(format, args...)}
}

// AsSpecError reports whether err is, or wraps, a SpecError, and returns it.
func AsSpecError(err error) (*SpecError, bool) {
	var specErr *SpecError
	ok := errors.As(err, &specErr)
	return specErr, ok
}

// Filter renders a filter of the spec for messages, with only the fields that are set; a value with
// control, invisible or separating characters is quoted with them escaped, so that the message
// shows what the spec holds.
func Filter(fields ...string) string {
	var set []string
	for i := 0; i+1 < len(fields); i += 2 {
		v := fields[i+1]
		if v == "" {
			continue
		}
		if q := strconv.Quote(v); q != `"`+v+`"` || strings.ContainsAny(v, " ,{}=") {
			v = q
		}
		set = append(set, fields[i]+"="+v)
	}
	return "{" + strings.Join(set, ", ") + "}"
}

// Resource is the OpenStack resource an event is about.
type Resource struct {
	// Kind is the resource's kind in one word: LoadBalancer, Listener, Pool, HealthMonitor,
	// Member, FloatingIP, Network, Subnet, Router, RouterInterface, SecurityGroup, Server, Port.
	Kind string
	Name string
	ID   string
	// Zone is the availability zone the resource serves; empty when it serves none in particular.
	Zone string
}

// Recorder records events on one object, and logs them with the reconcile's logger (which
// names the object and its cluster). A nil Recorder records nothing, and one without an event
// recorder or an object only logs, so that services can be used without one in tests.
type Recorder struct {
	recorder events.EventRecorder
	owner    runtime.Object
	log      logr.Logger
}

// NewRecorder returns a Recorder that records events on owner and logs to log.
func NewRecorder(recorder events.EventRecorder, owner runtime.Object, log logr.Logger) *Recorder {
	return &Recorder{recorder: recorder, owner: owner, log: log}
}

// Changed records a change made in the cloud: reason starts with the verb in the past tense
// (CreatedLoadBalancer, DeletedPort), which gives the event's action. The event names res as its
// related object, so that the changes of two resources (two zones' load balancers, say) are two
// events and never one series; the same goes to the log at the default verbosity.
func (r *Recorder) Changed(reason string, res Resource, format string, args ...any) {
	r.record(corev1.EventTypeNormal, reason, res, format, args...)
}

// Warn records something the user should act on or know about: a capability the cloud lacks, a
// resource in ERROR, a spec the cloud refutes. res is the resource concerned, if any.
func (r *Recorder) Warn(reason string, res Resource, format string, args ...any) {
	r.record(corev1.EventTypeWarning, reason, res, format, args...)
}

// Noted records something the controller observed that needs no action: a load balancer healthy
// again, DNS records following the zones.
func (r *Recorder) Noted(reason string, res Resource, format string, args ...any) {
	r.record(corev1.EventTypeNormal, reason, res, format, args...)
}

func (r *Recorder) record(eventType, reason string, res Resource, format string, args ...any) {
	if r == nil {
		return
	}
	verb := action(reason)
	message := Redact(fmt.Sprintf(format, args...))
	if r.log.GetSink() != nil {
		kv := []any{"type", eventType, "reason", reason}
		if verb != "Reconcile" {
			kv = append(kv, "verb", verb)
		}
		kv = append(kv, "kind", res.Kind, "name", res.Name, "id", res.ID, "zone", res.Zone)
		r.log.Info(message, kv...)
	}
	if r.recorder == nil || r.owner == nil {
		return
	}
	var related runtime.Object
	if res != (Resource{}) {
		// The event library folds events with the same object, related object, reason and action
		// into one series that keeps the first message: naming the resource keeps them apart.
		related = &corev1.ObjectReference{Kind: res.Kind, Name: res.Name, UID: types.UID(res.ID)}
	}
	r.recorder.Eventf(r.owner, related, eventType, reason, verb, "%s", message)
}

// verbs maps the start of a reason to the event's action.
var verbs = []struct{ past, action string }{
	{"Created", "Create"}, {"Deleted", "Delete"}, {"Released", "Delete"}, {"Renamed", "Rename"},
	{"Updated", "Update"}, {"Adopted", "Adopt"}, {"Associated", "Associate"}, {"Added", "Add"},
}

func action(reason string) string {
	for _, v := range verbs {
		if strings.HasPrefix(reason, v.past) {
			return v.action
		}
	}
	return "Reconcile"
}

// urlCredentials is the user information of a URL in a text: "scheme://user:password@".
var urlCredentials = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s"'@]+@`)

// Redact removes the user information of every URL in s ("http://user:secret@host" becomes
// "http://<redacted>@host"): a condition, an event or a log line is read by whoever may read the
// object, who need not be allowed to read its Secret.
func Redact(s string) string {
	return urlCredentials.ReplaceAllString(s, "${1}<redacted>@")
}
