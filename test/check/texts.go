package main

// texts holds the fixed sentences make check prints for a learner, in one
// language. What the lesson tables say (behaviours, hints, contracts, why an
// exercise is kind-only) and what the suites print stay as they are written, in
// English; so do the messages for the kit's maintainers (a lesson table to fix,
// a lane's steps). A line holds one language: the label in front of a table's
// English stays English in both languages (hint, needs, why), and a Japanese
// sentence that would follow the table's English, or the API server's, goes on a
// line of its own. The labels of a failed check's lines are padded so that their
// values line up on a terminal (a Japanese character takes two columns).
type texts struct {
	hint, needs, reread, log, panic, api string
	// skipExercise takes the exercise's name twice; skipKindOnly the exercise's
	// name and why it needs a kind cluster (LessonExercise.KindOnly).
	skipExercise, skipKindOnly string
	// skipKindOnlyCheck and skipLocalOnlyCheck take a check's behaviour and why
	// it needs a kind cluster (kittest.Check.KindOnly), or the local cluster
	// (kittest.Check.LocalClusterOnly); skipAsAbove takes the behaviour of a
	// check skipped for the reason of the one above it.
	skipKindOnlyCheck, skipLocalOnlyCheck, skipAsAbove string
	// didNotFinish takes the behaviour of a check whose test never ended.
	didNotFinish string
	// summary takes the checks passed and the checks run; fixFirst follows it
	// when one failed; period ends it.
	summary, fixFirst, period string
	// checking takes the lesson, what is checked (kubeSource, or the lesson's
	// tier), the list of withReconciler, withSolution and withExercise (each
	// takes its name), joined by listSep, and the timeout; ownDeadline stands for
	// the timeout when the suite keeps its own.
	checking, kubeSource, withReconciler, withSolution, withExercise, listSep, ownDeadline string
	// solutionReconciler takes the solution's Reconciler twice.
	solutionReconciler string
	// controllerDoesNotCompile, suiteDoesNotCompile and noCheckRan start the
	// report of a run in which no check ran.
	controllerDoesNotCompile, suiteDoesNotCompile, noCheckRan string
	// logShownAbove takes a log printed under an earlier check; logWhat takes a
	// log and what its lines printed below are (logEmpty, logLastErrors, which
	// takes their count, or logEndsWith); explainedAbove stands for a refusal
	// explained under an earlier check.
	logShownAbove, logWhat, logEmpty, logLastErrors, logEndsWith, explainedAbove string
	// apiRefused takes code, verb, resource, count and objects; apiHandled
	// takes the count of refusals left out.
	apiRefused, apiHandled string
	// The hints for a refused request, by what refused it (see refusalHint).
	// refusedByAdmission takes the verb and the API server's message;
	// refusedByRBAC the verb and the resource.
	refusedTerminating, refusedByAdmission, refusedByRBAC, refusedNotFound,
	refusedExists, refusedConflict, refusedInvalid, refusedOther string
}

// english is the default.
var english = texts{
	hint: "hint:   ", needs: "needs:  ", reread: "reread: ", log: "log:    ", panic: "panic:  ", api: "api:    ",
	skipExercise:             "exercise %s (EXERCISE=%s runs it)",
	skipKindOnly:             "exercise %s runs on kind only: %s (make kind-up, then the same command)",
	skipKindOnlyCheck:        "%s (runs on kind only: %s; make kind-up, then the same command)",
	skipLocalOnlyCheck:       "%s (runs on the local cluster only: %s)",
	skipAsAbove:              "%s (as above)",
	didNotFinish:             "%s (did not run to the end)",
	summary:                  "%d of %d checks pass",
	fixFirst:                 ": fix the first FAIL above, then run the same command again",
	period:                   ".",
	checking:                 "Checking lesson %s (%s) with %s; each wait gives up after %s.",
	kubeSource:               "Kubernetes' source",
	withReconciler:           "Reconciler %s",
	withSolution:             "solution %s",
	withExercise:             "exercise %s",
	listSep:                  ", ",
	ownDeadline:              "the suite's own deadline",
	solutionReconciler:       "The solution registers its own Reconciler, %s: checking that one (RECONCILER=%s).",
	controllerDoesNotCompile: "No check ran: the controller does not compile.",
	suiteDoesNotCompile:      "No check ran: the suite does not compile.",
	noCheckRan:               "No check ran. The suite's output ends with:",
	logShownAbove:            "%s (shown above)",
	logWhat:                  "%s, %s",
	explainedAbove:           "(explained above)",
	logEmpty:                 "empty: the controller wrote nothing, so it may never have started",
	logLastErrors:            "its last errors (%d in all)",
	logEndsWith:              "no error in it; it ends with",
	apiRefused:               "%s: %s %s, %d times (%s)",
	apiHandled:               "%d more refused requests (conflicts, timeouts) left out: the controller logged no error, so it handled them",
	refusedTerminating:       "the namespace is being deleted, and the API server refuses every create there: that is the end of the work (return nil), not an error to retry",
	refusedByAdmission:       "RBAC allowed this %s, and admission refused it: %q",
	refusedByRBAC:            "the shipped role does not grant %q on %s; use a verb it grants (the lesson's \"What the checks rely on\" names them) rather than widening the role",
	refusedNotFound:          "the object was already gone; a NotFound on the object you reconcile means done, not an error",
	refusedExists:            "an object of that name exists; read it (from the cache) instead of creating it again, and requeue when the cache lags behind",
	refusedConflict:          "you wrote an older version than the stored one; that is normal: requeue (the change queues the object again anyway) and do not report it as an error",
	refusedInvalid:           "the API server rejected the object's content; the controller's log has its message naming the field",
	refusedOther:             "see the controller's log for the API server's message",
}

// japanese is for a learner who reads the Japanese lessons (readsJapanese).
var japanese = texts{
	hint: "hint:   ", needs: "needs:  ", reread: "復習:   ", log: "ログ:   ", panic: "panic:  ", api: "API:    ",
	skipExercise:             "演習 %s（EXERCISE=%sで実行します）",
	skipKindOnly:             "演習 %s はkindでのみ動きます。make kind-upのあと、同じコマンドを実行してください。\n      why:    %s",
	skipKindOnlyCheck:        "%s\n      kindでのみ動くチェックです。make kind-upのあと、同じコマンドを実行してください。\n      why:    %s",
	skipLocalOnlyCheck:       "%s\n      ローカルクラスターでのみ動くチェックです。\n      why:    %s",
	skipAsAbove:              "%s\n      （上と同じ理由です）",
	didNotFinish:             "%s\n      （このチェックは最後まで実行されませんでした）",
	summary:                  "%[2]d個のチェックのうち%[1]d個に合格しました",
	fixFirst:                 "。上の最初のFAILを直してから、同じコマンドをもう一度実行してください",
	period:                   "。",
	checking:                 "レッスン%s（%s）をチェックします（%s）。各待機は%sで打ち切ります。",
	kubeSource:               "Kubernetesのソース",
	withReconciler:           "Reconciler %s",
	withSolution:             "解答 %s",
	withExercise:             "演習 %s",
	listSep:                  "、",
	ownDeadline:              "スイート自身の期限",
	solutionReconciler:       "この解答は独自のReconciler %s を登録するので、それをチェックします（RECONCILER=%s）。",
	controllerDoesNotCompile: "チェックは実行されませんでした。コントローラーがコンパイルできません。",
	suiteDoesNotCompile:      "チェックは実行されませんでした。テストスイートがコンパイルできません。",
	noCheckRan:               "チェックは実行されませんでした。スイートの出力の最後:",
	logShownAbove:            "%s（上に表示済み）",
	logWhat:                  "%s、%s",
	explainedAbove:           "（上で説明済み）",
	logEmpty:                 "空です。コントローラーは何も書いておらず、起動しなかったのかもしれません",
	logLastErrors:            "最後のエラー（全部で%d行）",
	logEndsWith:              "エラーはありません。最後の数行",
	apiRefused:               "%s: %s %s、%d回（%s）",
	apiHandled:               "拒否されたリクエストがほかに%d件（コンフリクト、タイムアウト）。コントローラーはエラーをログに出していないので、対処できています",
	refusedTerminating:       "Namespaceが削除中で、APIサーバーはそこでのcreateをすべて拒否します。仕事はそこで終わりです（nilを返す）。再試行すべきエラーではありません",
	refusedByAdmission:       "RBACはこの%sを許可しましたが、アドミッションが拒否しました。APIサーバーのメッセージは次のとおりです。\n              %q",
	refusedByRBAC:            "同梱のロールは%[2]sの%[1]qを許可していません。ロールを広げるのではなく、許可されている動詞を使ってください（レッスンの「チェックが前提としていること」に書いてあります）",
	refusedNotFound:          "オブジェクトはもうありませんでした。リコンサイルしているオブジェクトのNotFoundは「完了」であって、エラーではありません",
	refusedExists:            "その名前のオブジェクトはもうあります。もう一度作るのではなく（キャッシュから）読み、キャッシュが遅れているときは再キューしてください",
	refusedConflict:          "保存されているものより古いバージョンを書きました。これは普通のことです。再キューし（変更によってオブジェクトはどのみち再びキューに入ります）、エラーとして報告しないでください",
	refusedInvalid:           "APIサーバーがオブジェクトの内容を拒否しました。フィールドを挙げたメッセージがコントローラーのログにあります",
	refusedOther:             "APIサーバーのメッセージはコントローラーのログを見てください",
}

// learnerTexts returns the texts in the learner's language: Japanese when
// readsJapanese says so ($KIT_LANG, else the locale), else English.
func learnerTexts() texts {
	if readsJapanese() {
		return japanese
	}
	return english
}
