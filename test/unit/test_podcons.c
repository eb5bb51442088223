/* Unit tests for pkg/sched/podcons: which inter-pod constraints placement judges. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "pkg/sched/podcons.h"
#include "test/support/tjson.h"

#define ANTI(term)                                                                                 \
    "{'metadata':{'labels':{'app':'train'}},'spec':{'affinity':{'podAntiAffinity':{"               \
    "'requiredDuringSchedulingIgnoredDuringExecution':[" term "]}}}}"

static void check(const char *tmpl, bool one, const char *left)
{
    json_t *t = tjson(tmpl);
    struct podcons pc;
    podcons_from_template(t, &pc);
    if (pc.one_per_node != one)
        fail_msg("%s: one_per_node %d", tmpl, pc.one_per_node);
    if (left)
        assert_string_equal(pc.left ? pc.left : "(null)", left);
    else if (pc.left)
        fail_msg("%s: left %s", tmpl, pc.left);
    podcons_free(&pc);
    json_decref(t);
}

static void test_table(void **state)
{
    (void)state;
    check("{}", false, NULL);
    check("{'spec':{'containers':[]}}", false, NULL);
    /* self-matching anti-affinity on the hostname: one pod per node, judged */
    check(ANTI("{'topologyKey':'kubernetes.io/hostname','labelSelector':{'matchLabels':{'app':"
               "'train'}}}"),
          true, NULL);
    check(ANTI("{'topologyKey':'kubernetes.io/hostname','labelSelector':{'matchExpressions':[{"
               "'key':'app','operator':'In','values':['train','x']}]}}"),
          true, NULL);
    /* another key, another selector, other namespaces: left to the worker */
    check(ANTI("{'topologyKey':'topology.kubernetes.io/zone','labelSelector':{'matchLabels':{"
               "'app':'train'}}}"),
          false, "required pod anti-affinity (topologyKey topology.kubernetes.io/zone)");
    check(ANTI("{'topologyKey':'kubernetes.io/hostname','labelSelector':{'matchLabels':{'app':"
               "'db'}}}"),
          false, "required pod anti-affinity (topologyKey kubernetes.io/hostname)");
    check(ANTI("{'topologyKey':'kubernetes.io/hostname','namespaces':['other'],'labelSelector':{"
               "'matchLabels':{'app':'train'}}}"),
          false, "required pod anti-affinity (topologyKey kubernetes.io/hostname)");
    check(ANTI("{'topologyKey':'kubernetes.io/hostname'}"), false,
          "required pod anti-affinity (topologyKey kubernetes.io/hostname)"); /* nil selector */
    check(
        "{'spec':{'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
        "[{'topologyKey':'zone'}]},'podAntiAffinity':{"
        "'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':1}]}},"
        "'topologySpreadConstraints':[{'topologyKey':'zone','maxSkew':1},{'topologyKey':'zone'}]}}",
        false,
        "required pod affinity, preferred pod anti-affinity, topology spread (topologyKey zone)");
    /* malformed: named, no crash */
    check("{'spec':{'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution'"
          ":5}},'topologySpreadConstraints':'x'}}",
          false, "required pod anti-affinity (malformed), topology spread (malformed)");
    check("[]", false, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
