package formtask

import (
	"fmt"
	"slices"

	"github.com/postbox/postbox/store"
)

// signingSteps are a task's signing steps: its service's, or, for a service that declares none, one step
// of every signee the task names, when it names any. None: one signature by anyone with Sign archives it,
// as always.
func signingSteps(svc store.ServiceDetail, signees int) []store.SigningStep {
	if len(svc.SigningSteps) > 0 {
		return svc.SigningSteps
	}
	if signees > 0 {
		return []store.SigningStep{{Signees: store.SigneesOfTask}}
	}
	return nil
}

// planRefusal says why a task with these steps and signees cannot be completed yet, "" when it can: a step
// of named signees needs signees, as many as it counts.
func planRefusal(steps []store.SigningStep, signees int) string {
	for i, st := range steps {
		if st.Signees == store.SigneesOfTask && (signees == 0 || st.MinCount > signees) {
			return fmt.Sprintf("signing step %d needs %d named signees and the task names %d: name them first (PUT …/signees)",
				i+1, max(st.MinCount, 1), signees)
		}
	}
	return ""
}

// needed is how many signatures step st needs of a task that names signees signees.
func needed(st store.SigningStep, signees int) int {
	switch {
	case st.MinCount > 0:
		return st.MinCount
	case st.Signees == store.SigneesOfTask:
		return signees
	}
	return 1
}

// currentStep is the index of the first step whose signatures are not all there (signatures are the
// task's signatures not voided), len(steps) when every step is signed.
func currentStep(steps []store.SigningStep, signees int, signatures []Signature) int {
	for i, st := range steps {
		n := 0
		for _, s := range signatures {
			if s.Step == i+1 {
				n++
			}
		}
		if n < needed(st, signees) {
			return i
		}
	}
	return len(steps)
}

// stepFacts are what RecordSignature reads for the current step's rule: whether the signer holds a Role
// step's role for the task's party, and the party of an Organization step's organization.
type stepFacts struct {
	holdsRole    bool
	organization int64
}

// admit decides whether signer may sign in step st (index i) of a task of party taskParty: it returns the
// party the signature is on behalf of, or why not.
func admit(i int, st store.SigningStep, s Signer, taskParty int64, signees []TaskSignee, facts stepFacts) (int64, string) {
	switch st.Signees {
	case store.SigneesOrganization:
		if s.OnBehalfOf != 0 && s.OnBehalfOf == facts.organization {
			return facts.organization, ""
		}
		return 0, fmt.Sprintf("signing step %d is signed for organization %s, and you do not sign for it", i+1, st.OrganizationNumber)
	case store.SigneesOfTask:
		named := func(id int64) bool {
			return slices.ContainsFunc(signees, func(t TaskSignee) bool { return t.PartyID == id })
		}
		switch {
		case s.OnBehalfOf != 0 && named(s.OnBehalfOf):
			return s.OnBehalfOf, ""
		case s.OnBehalfOf == 0 && named(s.PartyID):
			return s.PartyID, ""
		}
		return 0, fmt.Sprintf("signing step %d is signed by the task's named signees, and you do not sign for one of them", i+1)
	case store.SigneesByRole:
		if facts.holdsRole {
			return taskParty, ""
		}
		return 0, fmt.Sprintf("signing step %d is signed by a holder of role %s for the party, which you are not", i+1, st.RoleDefinitionCode)
	}
	if s.MaySign {
		return taskParty, ""
	}
	return 0, fmt.Sprintf("signing step %d is signed by someone with the Sign right on the service for the party, "+
		"and the security level it needs; you have not", i+1)
}
