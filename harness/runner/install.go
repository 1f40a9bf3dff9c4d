package runner

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/cluster"
)

// CRDsOf reads the CRDs the step generated.
func CRDsOf(stepDir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(stepDir, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRD in %s/config/crd/bases: does api/v1 still carry +kubebuilder:object:root=true?", stepDir)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", f, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// InstallCRDs creates or updates the CRDs and waits until they are Established.
// With keepDifferent, an existing CRD with another spec is an error instead of
// being replaced (on a cluster that outlives the run, the harness never
// clobbers). It returns the names of the CRDs it created.
func InstallCRDs(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition, keepDifferent bool) ([]string, error) {
	var created []string
	for _, crd := range crds {
		var cur apiextensionsv1.CustomResourceDefinition
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), &cur)
		switch {
		case apierrors.IsNotFound(err):
			if err := c.Create(ctx, crd.DeepCopy()); err != nil {
				return created, fmt.Errorf("creating CRD %s: %w", crd.Name, err)
			}
			created = append(created, crd.Name)
		case err != nil:
			return created, fmt.Errorf("reading CRD %s: %w", crd.Name, err)
		case sameCRD(ctx, c, &cur, crd):
		case keepDifferent:
			return created, fmt.Errorf("the cluster already has a different CRD %s; the harness does not replace it "+
				"(make uninstall in the step, or run make install from the step you check)", crd.Name)
		default:
			cur.Spec = crd.Spec
			if err := c.Update(ctx, &cur); err != nil {
				return created, fmt.Errorf("updating CRD %s: %w", crd.Name, err)
			}
		}
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return created, err
		}
	}
	return created, nil
}

// sameCRD compares the installed CRD with ours as the API server would store
// ours: a dry-run update applies its defaulting, which a plain comparison of
// the specs would count as a difference.
func sameCRD(ctx context.Context, c client.Client, cur, ours *apiextensionsv1.CustomResourceDefinition) bool {
	trial := cur.DeepCopy()
	trial.Spec = ours.Spec
	if err := c.Update(ctx, trial, client.DryRunAll); err != nil {
		return false
	}
	return equality.Semantic.DeepEqual(cur.Spec, trial.Spec)
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	var last []apiextensionsv1.CustomResourceDefinitionCondition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			return false, nil
		}
		last = crd.Status.Conditions
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s did not become Established: %v (conditions: %+v)", name, err, last)
	}
	return nil
}

func (r *run) installCRD(ctx context.Context) error {
	crds, err := CRDsOf(r.opts.StepDir)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if where := stripStatusDefaults(crd); len(where) > 0 {
			r.note(fmt.Sprintf("the CRD %s sets defaults under its status (%s); installed without them: a status is the controller's to write, never the API server's",
				crd.Name, strings.Join(where, ", ")))
		}
	}
	c, err := r.adminClient()
	if err != nil {
		return err
	}
	outlives := r.backend.Outlives()
	created, err := InstallCRDs(ctx, c, crds, outlives)
	if err == nil && outlives {
		// The controller under test watches every namespace: the objects of
		// its primary kind already there are its too.
		gvk := r.opts.Step.Primary.GVK
		objs := &unstructured.UnstructuredList{}
		objs.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if c.List(ctx, objs) == nil && len(objs.Items) > 0 {
			r.note(fmt.Sprintf("the cluster already has %d %s(s); the controller under test will reconcile them too,\n"+
				"        so their status may change. Stop any other controller of them (make run) while the checks run.",
				len(objs.Items), gvk.Kind))
		}
	}
	if outlives {
		r.onTeardown(func() {
			for _, name := range created {
				_ = c.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
		})
	}
	return err
}

// RoleOf reads the ClusterRole the step generated from its RBAC markers.
func RoleOf(stepDir string) (*rbacv1.ClusterRole, error) {
	path := filepath.Join(stepDir, "config", "rbac", "role.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s (generated from the +kubebuilder:rbac markers): %w", path, err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, role); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return role, nil
}

// identity installs the generated ClusterRole (as gw10-manager-role, so it
// cannot collide with anything else in an existing cluster), binds it to the
// controller's identity, starts the API front with that identity (apifront:
// every request the controller makes is seen there) and writes the
// controller's kubeconfig, which names the front and holds no credentials.
// The bench's session (direct) names the API server itself: it measures
// the API server, not the front.
func (r *run) identity(ctx context.Context) error {
	role, err := RoleOf(r.opts.StepDir)
	if err != nil {
		return err
	}
	c, err := r.adminClient()
	if err != nil {
		return err
	}
	rules, dropped := role.Rules, []string(nil)
	if ceiling := r.opts.Step.RBACCeiling; ceiling != nil {
		rules, dropped = capRules(role.Rules, ceiling)
	}
	if len(dropped) > 0 {
		r.note(fmt.Sprintf("the role's markers ask for more than a %s controller is ever granted; not granted: %s",
			r.opts.Step.Name, strings.Join(dropped, "; ")))
	}
	role = &rbacv1.ClusterRole{Rules: rules}
	role.Name = "gw10-manager-role"
	role.Labels = map[string]string{cluster.ManagedLabel: "true"}
	var cur rbacv1.ClusterRole
	switch err := c.Get(ctx, client.ObjectKeyFromObject(role), &cur); {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, role); err != nil {
			return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
		}
		if r.backend.Outlives() {
			r.onTeardown(func() { _ = c.Delete(context.Background(), role) })
		}
	case err != nil:
		return fmt.Errorf("reading ClusterRole %s: %w", role.Name, err)
	default:
		cur.Rules = role.Rules
		if err := c.Update(ctx, &cur); err != nil {
			return fmt.Errorf("updating ClusterRole %s: %w", role.Name, err)
		}
	}
	cfg, err := r.backend.ControllerIdentity(ctx, c, role.Name)
	if err != nil {
		return err
	}
	if !r.direct {
		front, err := apifront.Start(apifront.Options{Upstream: cfg,
			Primary: schema.GroupResource{Group: r.opts.Step.Primary.GVK.Group, Resource: r.opts.Step.Primary.Resource}})
		if err != nil {
			return err
		}
		r.onTeardown(func() { _ = front.Close() })
		r.front, cfg = front, front.Config()
	}
	kc, err := cluster.Kubeconfig(cfg, cluster.ControllerUser)
	if err != nil {
		return err
	}
	path := filepath.Join(r.dir, "controller.kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return fmt.Errorf("writing the controller's kubeconfig: %w", err)
	}
	if r.apiserver, err = hostPort(cfg.Host); err != nil {
		return fmt.Errorf("the controller's API server: %w", err)
	}
	r.kubeconfig, r.role = path, role.Rules
	return nil
}

// hostPort is the host:port of a URL, or of a bare host:port (a
// rest.Config's Host may be either), with the scheme's port by default.
func hostPort(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
