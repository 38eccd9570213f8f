package kittest

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRulesWithoutTakesOneVerbOfOneResourceAndKeepsTheRest(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes", "nodes"}, Verbs: []string{"list", "create"}},
		{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}},
	}
	for _, tc := range []struct {
		name, verb, group, resource string
		want                        []rbacv1.PolicyRule
		ok                          bool
	}{
		{"a verb of a rule of two resources", "create", "", "persistentvolumes", []rbacv1.PolicyRule{
			rules[0],
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "create"}},
			{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"list"}},
			rules[2],
		}, true},
		{"the one verb of a subresource", "create", "", "pods/binding", rules[:2], true},
		{"a verb no rule grants", "delete", "", "persistentvolumes", rules, false},
		{"a resource of another group", "create", "storage.k8s.io", "persistentvolumes", rules, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := rulesWithout(rules, tc.verb, tc.group, tc.resource)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rulesWithout(%s %s) = %+v, %v; want %+v, %v", tc.verb, tc.resource, got, ok, tc.want, tc.ok)
			}
		})
	}
	if rules[1].Verbs[1] != "create" || len(rules[1].Resources) != 2 {
		t.Errorf("rulesWithout changed the rules it was given: %+v", rules[1])
	}
}
