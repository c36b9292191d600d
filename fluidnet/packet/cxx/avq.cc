// Queue discs of Kunniyur & Srikant (IEEE/ACM ToN 11(5), 2003), compiled at run time by cppyy.
//
//   fluidnet::DropFrontQueueDisc  a FIFO that, when an arriving packet does not fit, drops the
//                                 packet at the head of the queue (Sec VI-A: "drop-front" queues
//                                 spread losses over the flows in proportion to their rates, as
//                                 the fluid penalty (u - C)^+/u assumes).
//   fluidnet::AvqQueueDisc        the marking level C~ of Sec V as a virtual queue: a queue served
//                                 at C~ with a buffer of VirtualBuffer bytes; an arriving packet
//                                 that does not fit in it is ECN-marked (dropped if it is not
//                                 ECN-capable) and not added to it (Sec VI-B: marking "does not
//                                 continue till the virtual queue is empty"). With Adaptive, every
//                                 UpdateEvery arrivals C~ <- C~ + Alpha (Gamma C dt - A), dt the time
//                                 since the last update and A the bytes that arrived in it, kept in
//                                 [0, Gamma C]: the discretized law of Sec V-D with the arrival rate
//                                 measured over K packets (Sec VI-C). The real queue is drop-front.
//
// Rates are bytes/s of IP packets (what the queue disc sees); the Python side converts packets/s.

namespace fluidnet
{
using namespace ns3;

class DropFrontQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::DropFrontQueueDisc")
                                .SetParent<FifoQueueDisc>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<DropFrontQueueDisc>();
        return tid;
    }

    // Packets dropped from the head so far (the queue disc's drops are all of this kind).
    uint64_t GetFrontDrops() const
    {
        return m_frontDrops;
    }

  protected:
    // Make room for `item` by dropping packets from the head; queue it. False if it cannot fit
    // even in an empty queue (then it is dropped itself).
    bool EnqueueDroppingFront(Ptr<QueueDiscItem> item)
    {
        while (GetCurrentSize() + item > GetMaxSize())
        {
            Ptr<QueueDiscItem> head = GetInternalQueue(0)->Dequeue();
            if (!head)
            {
                DropBeforeEnqueue(item, "Larger than the buffer");
                return false;
            }
            ++m_frontDrops;
            DropAfterDequeue(head, "Drop front");
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        return EnqueueDroppingFront(item);
    }

  private:
    uint64_t m_frontDrops{0};
};

NS_OBJECT_ENSURE_REGISTERED(DropFrontQueueDisc);

class AvqQueueDisc : public DropFrontQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::AvqQueueDisc")
                .SetParent<DropFrontQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<AvqQueueDisc>()
                .AddAttribute("Capacity",
                              "Capacity C of the link (bytes/s of IP packets)",
                              DoubleValue(1.25e6),
                              MakeDoubleAccessor(&AvqQueueDisc::m_capacity),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Level",
                              "Initial marking level C~ (bytes/s)",
                              DoubleValue(1.2e6),
                              MakeDoubleAccessor(&AvqQueueDisc::m_initialLevel),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("VirtualBuffer",
                              "Buffer of the virtual queue (bytes)",
                              DoubleValue(1e5),
                              MakeDoubleAccessor(&AvqQueueDisc::m_vbuffer),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Adaptive",
                              "Adapt C~ (Sec V-D) or keep it fixed",
                              BooleanValue(false),
                              MakeBooleanAccessor(&AvqQueueDisc::m_adaptive),
                              MakeBooleanChecker())
                .AddAttribute("Gamma",
                              "Target utilisation gamma",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&AvqQueueDisc::m_gamma),
                              MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("Alpha",
                              "Step size of the adaptive law (1/s)",
                              DoubleValue(0.05),
                              MakeDoubleAccessor(&AvqQueueDisc::m_alpha),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("UpdateEvery",
                              "Arrivals between two updates of C~ (K)",
                              UintegerValue(1000),
                              MakeUintegerAccessor(&AvqQueueDisc::m_every),
                              MakeUintegerChecker<uint32_t>(1));
        return tid;
    }

    // The marking level C~ (bytes/s).
    double GetLevel() const
    {
        return m_level;
    }

    // C~ / C, the state traced by fluidnet::Experiment.
    double GetNormalizedLevel() const
    {
        return m_capacity > 0 ? m_level / m_capacity : 0.0;
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        double now = Simulator::Now().GetSeconds();
        double size = item->GetSize();
        m_vqueue = std::max(0.0, m_vqueue - m_level * (now - m_lastArrival));
        m_lastArrival = now;
        if (m_adaptive)
        {
            m_arrived += size;
            if (++m_count >= m_every)
            {
                double dt = now - m_lastUpdate;
                double top = m_gamma * m_capacity;
                m_level = std::min(top, std::max(0.0, m_level + m_alpha * (top * dt - m_arrived)));
                m_arrived = 0.0;
                m_count = 0;
                m_lastUpdate = now;
            }
        }
        if (m_vqueue + size > m_vbuffer)
        {
            if (!Mark(item, "AVQ mark"))
            {
                DropBeforeEnqueue(item, "AVQ drop");
                return false;
            }
        }
        else
        {
            m_vqueue += size;
        }
        return EnqueueDroppingFront(item);
    }

    void InitializeParams() override
    {
        m_level = m_initialLevel;
        m_vqueue = 0.0;
        m_arrived = 0.0;
        m_count = 0;
        m_lastArrival = Simulator::Now().GetSeconds();
        m_lastUpdate = m_lastArrival;
    }

    double m_capacity{1.25e6};
    double m_initialLevel{1.2e6};
    double m_vbuffer{1e5};
    bool m_adaptive{false};
    double m_gamma{1.0};
    double m_alpha{0.05};
    uint32_t m_every{1000};
    double m_level{0.0};
    double m_vqueue{0.0};
    double m_arrived{0.0};
    uint32_t m_count{0};
    double m_lastArrival{0.0};
    double m_lastUpdate{0.0};
};

NS_OBJECT_ENSURE_REGISTERED(AvqQueueDisc);

} // namespace fluidnet
