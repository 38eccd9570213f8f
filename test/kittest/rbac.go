package kittest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Access is one request a program makes as its identity: who (User, in Groups),
// which verb, on which resource (of APIGroup, "" for the core group; with its
// subresource, such as "binding" for pods/binding) and in which namespace (""
// for a cluster-scoped resource or every namespace).
type Access struct {
	User        string
	Groups      []string
	Verb        string
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
}

// ServiceAccountAccess is the Access of the ServiceAccount namespace/name, with
// the groups the API server gives every ServiceAccount, to do verb on resource
// (of apiGroup; "resource/subresource" for a subresource).
func ServiceAccountAccess(namespace, name, verb, apiGroup, resource string) Access {
	a := Access{
		User:     "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		Verb:     verb,
		APIGroup: apiGroup,
	}
	a.Resource, a.Subresource = splitResource(resource)
	return a
}

// UserAccess is the Access of a user that is no ServiceAccount (such as
// system:kube-scheduler, whom the cluster's own roles name) to do verb on
// resource (of apiGroup; "resource/subresource" for a subresource).
func UserAccess(user, verb, apiGroup, resource string) Access {
	a := Access{User: user, Groups: []string{"system:authenticated"}, Verb: verb, APIGroup: apiGroup}
	a.Resource, a.Subresource = splitResource(resource)
	return a
}

// splitResource splits "pods/binding" into "pods" and "binding".
func splitResource(resource string) (string, string) {
	name, sub, _ := strings.Cut(resource, "/")
	return name, sub
}

// fullResource is the resource as RBAC rules and audit logs name it:
// "pods/binding" for a subresource.
func (a Access) fullResource() string {
	if a.Subresource != "" {
		return a.Resource + "/" + a.Subresource
	}
	return a.Resource
}

// String is the access in words, such as "system:kube-scheduler to create
// pods/binding".
func (a Access) String() string {
	s := a.User + " to " + a.Verb + " " + a.fullResource()
	if a.APIGroup != "" {
		s += " (" + a.APIGroup + ")"
	}
	if a.Namespace != "" {
		s += " in " + a.Namespace
	}
	return s
}

// Allowed asks the API server's authorizer, through a SubjectAccessReview,
// whether it lets a through.
func (a Access) Allowed(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   a.User,
			Groups: a.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: a.Namespace, Verb: a.Verb, Group: a.APIGroup,
				Resource: a.Resource, Subresource: a.Subresource,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return review.Status.Allowed, nil
}

// Refused reports whether the audit log entry e is the API server's refusal of
// a by its authorizer: a's user, verb and resource, answered 403 after the
// decision "forbid".
func (a Access) Refused(e AuditEntry) bool {
	return e.User == a.User && e.Verb == a.Verb && e.APIGroup == a.APIGroup &&
		e.Resource == a.Resource && e.Subresource == a.Subresource &&
		(a.Namespace == "" || e.Namespace == a.Namespace) &&
		e.Code == 403 && e.Authorization == "forbid"
}

// WithoutRule takes a's verb on a's resource out of the ClusterRole called role
// until the test ends, and waits until the API server refuses a (its
// authorizer's cache has the change). It returns restore, which puts the role's
// rules back as they were and waits until the API server allows a again; at
// cleanup the rules are put back if restore was not called. It fails the test when the role has no rule that grants the
// verb by name (a rule of "*" would prove nothing about the role's own rules),
// or when the API server still allows a after the deadline: then another role
// bound to the user grants it too.
func WithoutRule(t testing.TB, cs kubernetes.Interface, timeout time.Duration, role string, a Access) (restore func()) {
	t.Helper()
	ctx := context.Background()
	shipped, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the ClusterRole %s: %v", role, err)
	}
	rules, ok := rulesWithout(shipped.Rules, a.Verb, a.APIGroup, a.fullResource())
	if !ok {
		t.Fatalf("the ClusterRole %s has no rule that grants %s on %s by name: nothing to take out", role, a.Verb, a.fullResource())
	}
	setRules := func(rules []rbacv1.PolicyRule) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cr, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cr.Rules = rules
			_, err = cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
			return err
		})
	}
	restored := false
	t.Cleanup(func() {
		if restored {
			return
		}
		if err := setRules(shipped.Rules); err != nil {
			t.Errorf("putting back the rules of the ClusterRole %s: %v", role, err)
		}
	})
	if err := setRules(rules); err != nil {
		t.Fatalf("taking %s on %s out of the ClusterRole %s: %v", a.Verb, a.fullResource(), role, err)
	}
	t.Logf("took %s on %s out of the ClusterRole %s until the test ends", a.Verb, a.fullResource(), role)
	Eventually(t, timeout, "the API server to refuse "+a.String()+" (another role bound to the user grants it?)",
		func(ctx context.Context) (bool, error) {
			allowed, err := a.Allowed(ctx, cs)
			return err == nil && !allowed, err
		})
	return func() {
		t.Helper()
		if err := setRules(shipped.Rules); err != nil {
			t.Fatalf("putting back the rules of the ClusterRole %s: %v", role, err)
		}
		restored = true
		t.Logf("put the rules of the ClusterRole %s back", role)
		Eventually(t, timeout, "the API server to allow "+a.String()+" again", func(ctx context.Context) (bool, error) {
			return a.Allowed(ctx, cs)
		})
	}
}

// rulesWithout returns rules with verb on resource (of apiGroup) taken out of
// every rule that names all three, each such rule split into the rest of its
// resources with all its verbs and the resource with the other verbs; ok is
// false when no rule names all three.
func rulesWithout(rules []rbacv1.PolicyRule, verb, apiGroup, resource string) (out []rbacv1.PolicyRule, ok bool) {
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, apiGroup) || !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			out = append(out, r)
			continue
		}
		ok = true
		if others := slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == resource }); len(others) > 0 {
			rest := *r.DeepCopy()
			rest.Resources = others
			out = append(out, rest)
		}
		if verbs := slices.DeleteFunc(slices.Clone(r.Verbs), func(s string) bool { return s == verb }); len(verbs) > 0 {
			less := *r.DeepCopy()
			less.Resources = []string{resource}
			less.Verbs = verbs
			out = append(out, less)
		}
	}
	return out, ok
}

// WaitRefused waits until the audit log of the local cluster records the API
// server's refusal of a (see Access.Refused) received at or after since, and
// returns it. Before each look, done may end the wait early with an error that
// says why the refusal cannot come (the object the request would have made is
// there already: the program did not act as a's user); the test then fails with
// it. On a cluster without the kit's audit log the test is skipped (Writes).
func WaitRefused(t testing.TB, timeout time.Duration, since time.Time, a Access, done func(ctx context.Context) error) AuditEntry {
	t.Helper()
	var refusal AuditEntry
	Eventually(t, timeout, "the audit log to record the API server's refusal (403) of "+a.String(),
		func(ctx context.Context) (bool, error) {
			if done != nil {
				if err := done(ctx); err != nil {
					t.Fatalf("waiting for the API server to refuse %s: %v", a, err)
				}
			}
			refusals := Writes(t, since, a.Refused)
			if len(refusals) == 0 {
				return false, fmt.Errorf("no such refusal since %s", since.UTC().Format(time.TimeOnly))
			}
			refusal = refusals[0]
			return true, nil
		})
	return refusal
}

// WrittenBy returns the user of the first write at or after since that match
// accepts, as the local cluster's audit log records it (see Writes), or
// otherwise when there is none: what a check says when a program did what its
// role no longer lets it do, and the audit log names who did.
func WrittenBy(t testing.TB, since time.Time, match func(AuditEntry) bool, otherwise string) string {
	t.Helper()
	if writes := Writes(t, since, match); len(writes) > 0 {
		return writes[0].User
	}
	return otherwise
}
