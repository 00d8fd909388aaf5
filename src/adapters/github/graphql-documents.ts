/**
 * Every GraphQL document Terfyn sends, as constants. The gateway refuses any other document, so
 * nothing can send a mutation that is not here (and nothing here resolves, minimizes, merges or
 * deletes). Tests validate each against GitHub's schema (a fixture pruned from
 * @octokit/graphql-schema by scripts/refresh-github-fixtures.ts).
 */

const COMMENT_FIELDS = `
        id
        fullDatabaseId
        author { login __typename }
        body
        createdAt
        lastEditedAt
        commit { oid }
        originalCommit { oid }
        diffHunk`;

/** A pull request's review threads, 100 a page, with the first 100 comments of each. */
export const REVIEW_THREADS_QUERY = `query TerfynReviewThreads($owner: String!, $repo: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      number
      headRefName
      headRefOid
      baseRefOid
      isCrossRepository
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          isOutdated
          path
          line
          originalLine
          diffSide
          comments(first: 100) {
            pageInfo { hasNextPage endCursor }
            nodes {${COMMENT_FIELDS}
            }
          }
        }
      }
    }
  }
}`;

/** The further comments of one thread, past its first 100. */
export const THREAD_COMMENTS_QUERY = `query TerfynThreadComments($id: ID!, $after: String) {
  node(id: $id) {
    ... on PullRequestReviewThread {
      comments(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {${COMMENT_FIELDS}
        }
      }
    }
  }
}`;

/** A reply in a review thread: the only mutation Terfyn sends. */
export const THREAD_REPLY_MUTATION = `mutation TerfynThreadReply($threadId: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: { pullRequestReviewThreadId: $threadId, body: $body }) {
    comment { id url }
  }
}`;

export const GRAPHQL_DOCUMENTS: readonly string[] = [
  REVIEW_THREADS_QUERY,
  THREAD_COMMENTS_QUERY,
  THREAD_REPLY_MUTATION,
];
