// Package reliability is the kit's reliability suite (`make test-reliability`):
// each test breaks something on purpose and checks what a user would notice
// afterwards, the way kube-controller-manager's controllers promise it: nothing
// lost, nothing duplicated, everything converged.
//
//   - TestFooBurstSurvivesControllerCrash, TestGuestbookBurstSurvivesManagerCrash:
//     a burst of objects, the controller SIGKILLed when about a third of the
//     children exist, restarted: exactly one child (set) per object, each
//     controlled by its owner, no ErrResourceExists, all converged.
//   - TestBadInputIsRejectedNamingTheField: for every schema bound, CEL rule and
//     webhook rule of the Foo and Guestbook CRDs, an object the API server
//     refuses, with the field's path in its error.
//   - TestLeaderTakeOver: for tiers 2 and 3, the leader SIGKILLed, the time
//     until the standby leads (read from the Lease).
//   - TestShippedManifestsRunRestricted: each tier's make deploy manifests in a
//     namespace enforcing the restricted Pod Security Standard, RBAC checked
//     with kubectl auth can-i.
//   - TestControllersRideOutAnAPIServerOutage: kube-apiserver stopped for 20 s
//     (bin/kit-component): controllers without leader election ride it out
//     and converge on changes made right after it; a leader exits non-zero
//     within its renew deadline; etcd is compacted meanwhile, so a watching
//     informer cannot resume its watch (410 Gone) and lists again.
//
// The suite starts a fresh local cluster of its own (controller-kit-reliability),
// runs the controllers as real processes with the RBAC they ship, and writes
// what it measured to _output/reliability.json with a table on standard output.
// Timings are figures for the report, never pass/fail conditions. The tests
// carry the build tag e2e, as the tiers' e2e suites do.
//
// docs/reliability.md explains each scenario and its figures.
package reliability
