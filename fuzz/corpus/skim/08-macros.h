namespace std _GLIBCXX_VISIBILITY(default)
{
_GLIBCXX_BEGIN_NAMESPACE_VERSION
  class LIB_EXPORT exception
  {
  public:
    exception() _GLIBCXX_NOTHROW { }
    virtual ~exception() _GLIBCXX_TXN_SAFE_DYN _GLIBCXX_NOTHROW;
    int n GUARDED_BY(mu);
  };
_GLIBCXX_END_NAMESPACE_VERSION
}
#ifdef __cplusplus
extern "C" {
#endif
LIB_EXPORT int f(void);
